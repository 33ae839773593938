"""The host a hook command names (core/hook_hosts.py) and the stamp of what it stores."""

from __future__ import annotations

import pytest

from core.hook_hosts import HookArgumentsInvalid, hook_host, hook_source_host


def test_a_hook_naming_no_host_is_claude_code_s() -> None:
    assert hook_host([]) == "claude-code"
    assert hook_source_host(hook_host([])) == "claude-code-hooks"


def test_a_hook_names_its_host_with_host_or_host_equals() -> None:
    assert hook_host(["--host", "codex"]) == "codex"
    assert hook_host(["--host=gemini-cli"]) == "gemini-cli"
    assert hook_source_host("codex") == "codex-hooks"
    # The Hermes provider runs the prompt capture itself and names Hermes Agent.
    assert hook_source_host(hook_host(["--host", "hermes-agent"])) == "hermes-agent-hooks"


@pytest.mark.parametrize(
    "words",
    [["--host", "nobody"], ["--host"], ["--host=", "x"], ["stray"], ["--host", "codex", "x"]],
)
def test_any_other_words_are_refused_with_what_is_accepted(words: list[str]) -> None:
    with pytest.raises(HookArgumentsInvalid, match=r"--host|one of"):
        hook_host(words)
