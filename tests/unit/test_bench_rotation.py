"""The fusion's rotation check (bench/rotation.py): a rule's alternative is in place only for
its run, constants captured as keyword defaults included, and the verdict follows the
rotation's rule (win on average, lose no fold by more than a point). It measures nothing."""

from __future__ import annotations

from bench import rotation
from graph.search import fusion


def test_an_alternative_is_applied_for_the_run_and_restored_after_it() -> None:
    rule = rotation.Rule("cut-off", "0.25", "0.3", (("fusion", "SEMANTIC_CUTOFF", 0.3),))
    before = fusion.SEMANTIC_CUTOFF
    defaults = fusion.fuse.__kwdefaults__
    assert defaults is not None
    with rotation.applied(rule):
        assert fusion.SEMANTIC_CUTOFF == 0.3
        assert defaults["cutoff"] == 0.3
    assert before == fusion.SEMANTIC_CUTOFF
    assert defaults["cutoff"] == before


def test_a_context_weight_reaches_the_default_with_context_reads() -> None:
    rule = rotation.Rule("context", "0.25", "off", (("fusion", "CONTEXT_WEIGHT", 0.0),))
    with rotation.applied(rule):
        lifted = fusion.with_context(
            [fusion.Fused(1, 1.0, "keyword", 1.0), fusion.Fused(2, 0.5, "keyword", 0.5)],
            {2: [1]},
        )
    assert [f.relevance for f in lifted] == [1.0, 0.5]


def test_every_rule_names_attributes_that_exist() -> None:
    modules = rotation._modules()
    for rule in rotation.RULES:
        for module, attribute, _ in rule.patches:
            assert hasattr(modules[module], attribute), (rule.name, attribute)


def test_a_rule_that_wins_everywhere_is_kept() -> None:
    folds = ["a", "a", "b", "b"]
    verdict = rotation.judge([1, 1, 1, 1], [1, 20, 1, 20], folds)
    assert verdict["keep"] is True
    assert verdict["picks"] == {"a": "current", "b": "current"}
    assert verdict["deltas"]["a"] == {1: 0.5, 5: 0.5, 10: 0.5}


def test_a_rule_that_loses_one_fold_by_more_than_a_point_is_not_kept() -> None:
    folds = ["a"] * 4 + ["b"] * 4
    # Fold a gains three queries at every k, fold b loses one (25 points) at hit@1.
    current = [1, 1, 1, 1, 2, 1, 1, 1]
    alternative = [1, None, None, None, 1, 1, 1, 1]
    verdict = rotation.judge(current, alternative, folds)
    assert verdict["mean"][1] > 0
    assert verdict["worst"] == -0.25
    assert verdict["keep"] is False
    # Tuned on fold a alone, fold b is measured with the current value; and the other way.
    assert verdict["picks"] == {"a": "alternative", "b": "current"}
