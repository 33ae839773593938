"""The text pipeline: one tokenizer for index and query time (graph/search/text.py)."""

from __future__ import annotations

import string
import unicodedata

from hypothesis import example, given, settings
from hypothesis import strategies as st

from graph.search import text


def test_it_folds_nfc_and_nfd_spellings_to_the_same_token() -> None:
    nfc = unicodedata.normalize("NFC", "naïve")
    nfd = unicodedata.normalize("NFD", "naïve")
    assert nfc != nfd
    assert text.tokens(nfc) == text.tokens(nfd) == text.tokens("naive")


def test_it_folds_latin_greek_and_cyrillic_diacritics() -> None:
    assert text.normalize("Crème Brûlée") == "creme brulee"
    assert text.normalize("Ελληνικά") == "ελληνικα"
    assert text.normalize("йод") == "иод"


def test_it_keeps_marks_that_carry_meaning_in_other_scripts() -> None:
    # The kana voicing mark turns か into が; folding it away would merge two words.
    assert text.normalize("が") == "が"
    assert text.tokens("ที่นี่") != text.tokens("ทนี")


def test_it_case_folds() -> None:
    assert text.tokens("PostgreSQL") == text.tokens("postgresql")
    assert text.normalize("Straße") == "strasse"


def test_punctuation_inside_a_word_splits_it() -> None:
    assert text.tokens("kitchen's") == ["kitchen", "s"]
    assert text.tokens("auth-decision") == ["auth", "decis"]
    assert text.tokens("snake_case.value") == ["snake", "case", "valu"]


def test_it_stems_english_words_so_forms_of_a_word_meet() -> None:
    assert text.tokens("graduating") == text.tokens("graduate") == text.tokens("graduated")
    assert text.tokens("databases") == text.tokens("database")


def test_it_leaves_identifiers_with_digits_unstemmed() -> None:
    assert text.tokens("RS256 tokens") == ["rs256", "token"]


def test_cjk_runs_become_overlapping_two_character_pieces() -> None:
    assert text.tokens("資料庫遷移") == ["資料", "料庫", "庫遷", "遷移"]


def test_a_lone_cjk_character_stays_whole() -> None:
    assert text.tokens("表 table") == ["表", "tabl"]


def test_kana_hangul_thai_lao_and_khmer_are_segmented_too() -> None:
    for sample in ("ひらがな", "カタカナ", "한국어", "ภาษาไทย", "ພາສາລາວ", "ភាសាខ្មែរ"):
        pieces = text.tokens(sample)
        assert len(pieces) > 1, sample
        assert all(len(p) <= 2 for p in pieces), (sample, pieces)


def test_a_script_change_splits_a_run() -> None:
    assert text.tokens("PostgreSQL資料庫") == ["postgresql", "資料", "料庫"]


def test_index_and_query_share_one_tokenizer() -> None:
    sentence = "資料庫遷移前一定要先備份 before the kitchen's naïve migration"
    assert set(text.query_terms(sentence)) <= set(text.index_text(sentence).split())


def test_query_terms_drop_stopwords_and_duplicates_in_order() -> None:
    assert text.query_terms("What degree did I graduate with? degree") == ["degre", "graduat"]


def test_a_query_of_only_stopwords_keeps_them() -> None:
    assert text.query_terms("the") == ["the"]
    assert text.query_terms("not or and") == ["not", "or", "and"]


def test_a_query_with_nothing_searchable_has_no_terms() -> None:
    assert text.query_terms("???") == []
    assert text.query_terms("@#$% ... !!") == []


def test_match_expression_quotes_every_term() -> None:
    assert text.match_expression(["redi", "or", "postgr"]) == '"redi" OR "or" OR "postgr"'
    assert text.match_expression(['a"b']) == '"a""b"'


def test_fts_syntax_in_a_query_never_survives_as_syntax() -> None:
    terms = text.query_terms('redis OR postgres NOT "x" (a*) b:c NEAR(d e) ^f')
    assert all(term.isalnum() for term in terms)
    expression = text.match_expression(terms)
    assert expression.count('"') == 2 * len(terms)


def test_the_guard_drops_terms_in_more_than_half_the_rows() -> None:
    freqs = {"servic": 40, "kubernet": 1}
    assert text.select_terms(["servic", "kubernet"], freqs, total_rows=41) == ["kubernet"]


def test_the_guard_keeps_the_rarest_term_when_all_are_common() -> None:
    freqs = {"the": 41, "servic": 40}
    assert text.select_terms(["the", "servic"], freqs, total_rows=41) == ["servic"]


def test_the_guard_keeps_the_first_term_on_a_tie_of_rarest() -> None:
    freqs = {"alpha": 30, "beta": 30}
    assert text.select_terms(["beta", "alpha"], freqs, total_rows=40) == ["beta"]


def test_the_guard_does_not_apply_below_25_rows() -> None:
    freqs = {"servic": 24, "kubernet": 1}
    assert text.select_terms(["servic", "kubernet"], freqs, total_rows=24) == [
        "servic",
        "kubernet",
    ]


def test_exactly_half_the_rows_is_not_common() -> None:
    assert text.select_terms(["x"], {"x": 20}, total_rows=40) == ["x"]
    assert text.select_terms(["x", "y"], {"x": 21, "y": 1}, total_rows=40) == ["y"]


def test_from_1000_rows_a_term_in_more_than_a_fifth_is_dropped_while_a_rarer_one_remains() -> None:
    freqs = {"deploy": 201, "kubernet": 3, "servic": 200}
    assert text.select_terms(["deploy", "kubernet", "servic"], freqs, total_rows=1000) == [
        "kubernet",
        "servic",
    ]


def test_frequent_terms_are_kept_when_no_rarer_term_remains() -> None:
    freqs = {"deploy": 400, "servic": 300, "the": 600}
    assert text.select_terms(["deploy", "servic", "the"], freqs, total_rows=1000) == [
        "deploy",
        "servic",
    ]


def test_the_frequent_term_cut_does_not_apply_below_1000_rows() -> None:
    freqs = {"deploy": 400, "kubernet": 3}
    assert text.select_terms(["deploy", "kubernet"], freqs, total_rows=999) == [
        "deploy",
        "kubernet",
    ]


def test_a_query_whose_every_term_is_in_more_than_half_the_rows_ranks_a_window() -> None:
    # The guard kept the rarest of two common terms: FTS5 gives it no idf.
    assert text.match_window(["servic"], {"servic": 21}, total_rows=40, candidates=40) == (
        text.COMMON_MATCH_WINDOW
    )
    assert text.match_window(["a", "b"], {"a": 30, "b": 35}, total_rows=40, candidates=40) == max(
        text.COMMON_MATCH_WINDOW, 40 * text.WINDOW_PER_CANDIDATE
    )


def test_the_window_holds_several_times_the_candidates_asked_for() -> None:
    many = text.COMMON_MATCH_WINDOW  # candidates enough to outgrow the fixed window
    assert text.match_window(["x"], {"x": 90}, total_rows=100, candidates=many) == (
        many * text.WINDOW_PER_CANDIDATE
    )


def test_every_match_is_ranked_while_one_term_is_in_at_most_half_the_rows() -> None:
    assert text.match_window(["x"], {"x": 20}, total_rows=40, candidates=40) is None
    assert text.match_window(["x", "y"], {"x": 39, "y": 20}, total_rows=40, candidates=40) is None
    # Below the guard's floor a term in every row may be the subject, and every match is cheap.
    assert text.match_window(["x"], {"x": 24}, total_rows=24, candidates=40) is None
    assert text.match_window([], {}, total_rows=100, candidates=40) is None


def test_terms_no_row_contains_do_not_take_a_place_under_the_cap() -> None:
    terms = [f"missing{i}" for i in range(40)] + ["present"]
    assert text.select_terms(terms, {"present": 1}, total_rows=100) == ["present"]


def test_the_cap_keeps_the_first_32_surviving_terms_in_query_order() -> None:
    terms = [f"t{i}" for i in range(41)]
    freqs = dict.fromkeys(terms, 1)
    assert text.select_terms(terms, freqs, total_rows=100) == terms[:32]


def test_common_terms_are_dropped_before_the_cap() -> None:
    common = [f"c{i}" for i in range(32)]
    freqs = {**dict.fromkeys(common, 90), "rare": 1}
    assert text.select_terms([*common, "rare"], freqs, total_rows=100) == ["rare"]


def test_observation_normalisation_ignores_whitespace_differences() -> None:
    assert text.normalize_observation("  a\tb \n c ") == text.normalize_observation("a b c")


ascii_words = st.text(alphabet=string.ascii_letters + string.digits + " -_.'\n\t", max_size=300)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(ascii_words)
@example("x" * 65 + " " + "Graduating" * 7 + " graduate")  # past the cached word length
def test_ascii_text_is_tokenized_as_the_general_pipeline_tokenizes_it(value: str) -> None:
    # tokens() finishes ASCII words through a cache: it must agree with the pipeline it
    # short-cuts, word by word (stemming, digits left alone, long words cut the same way).
    general = [text._finish(tok, is_word) for tok, is_word in text._raw_tokens(value)]
    assert text.tokens(value) == general
    assert text.tokens(value) == general  # and again, now from the cache
