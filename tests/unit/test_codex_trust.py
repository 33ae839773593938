"""hosts/codex_trust.py: which of memesh's hooks Codex will skip as untrusted, read from the
trust records Codex keeps in its config.toml. The keys and hashes below are what Codex CLI
0.169.0's app server reported for this hooks.json (`hooks/list`: `key`, `currentHash`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomlkit

from hosts.codex_trust import hook_hash, hook_key, untrusted_memesh_hooks

HOOKS_FILE = Path("/home/user/.codex/hooks.json")
MEMESH = "/opt/memesh/bin/memesh"
SESSION_START_COMMAND = f"{MEMESH} hook session-start"
PRE_TOOL_USE_COMMAND = f"{MEMESH} hook pre-tool-use"
HOOKS: dict[str, Any] = {
    "hooks": {
        "SessionStart": [
            {"hooks": [{"type": "command", "command": SESSION_START_COMMAND, "timeout": 30}]}
        ],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]},
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": PRE_TOOL_USE_COMMAND, "timeout": 10}],
            },
        ],
    }
}
# As Codex reported them.
SESSION_START_KEY = f"{HOOKS_FILE}:session_start:0:0"
SESSION_START_HASH = "sha256:974386fd81e8d75e16f576ceff9ebe2b01ebcf17dd345157d90b6270b5559468"
PRE_TOOL_USE_KEY = f"{HOOKS_FILE}:pre_tool_use:1:0"
PRE_TOOL_USE_HASH = "sha256:ab713acf0376ad9b4e3cb11b7fc147dd71eed049c443cabba09aa55117c62975"
LINT_HASH = "sha256:a16b9934098f691e5c2d409e53ef05dc5cea998d5f52022eefab6a607841849f"


def codex_config(trusted: dict[str, str]) -> str:
    """config.toml as Codex's `/hooks` (the app server's `config/batchWrite` of `hooks.state`)
    leaves it."""
    text = '[mcp_servers.memesh]\ncommand = "memesh"\nargs = ["mcp"]\n\n[hooks.state]\n'
    for key, digest in trusted.items():
        text += f'\n[hooks.state."{key}"]\ntrusted_hash = "{digest}"\n'
    return text


def test_keys_and_hashes_are_the_ones_codex_files_trust_under() -> None:
    session_start = HOOKS["hooks"]["SessionStart"][0]
    lint, pre_tool_use = HOOKS["hooks"]["PreToolUse"]

    assert hook_key(HOOKS_FILE, "SessionStart", 0, 0) == SESSION_START_KEY
    assert hook_key(HOOKS_FILE, "PreToolUse", 1, 0) == PRE_TOOL_USE_KEY
    assert hook_hash("SessionStart", session_start, session_start["hooks"][0]) == (
        SESSION_START_HASH
    )
    assert hook_hash("PreToolUse", pre_tool_use, pre_tool_use["hooks"][0]) == PRE_TOOL_USE_HASH
    assert hook_hash("PreToolUse", lint, lint["hooks"][0]) == LINT_HASH  # Codex's own timeout


def test_memeshs_hooks_are_untrusted_until_codex_records_their_trust() -> None:
    nothing = tomlkit.parse(codex_config({}))
    half = tomlkit.parse(codex_config({SESSION_START_KEY: SESSION_START_HASH}))
    both = tomlkit.parse(
        codex_config({SESSION_START_KEY: SESSION_START_HASH, PRE_TOOL_USE_KEY: PRE_TOOL_USE_HASH})
    )

    assert untrusted_memesh_hooks(HOOKS_FILE, HOOKS, nothing) == [
        "SessionStart * session-start",
        "PreToolUse Bash pre-tool-use",
    ]  # the user's ./lint.sh is not memesh's to report
    assert untrusted_memesh_hooks(HOOKS_FILE, HOOKS, half) == ["PreToolUse Bash pre-tool-use"]
    assert untrusted_memesh_hooks(HOOKS_FILE, HOOKS, both) == []


def test_a_hook_changed_since_it_was_trusted_is_untrusted_again() -> None:
    config = tomlkit.parse(
        codex_config({SESSION_START_KEY: SESSION_START_HASH, PRE_TOOL_USE_KEY: PRE_TOOL_USE_HASH})
    )
    moved = {
        "hooks": {
            event: [
                {
                    **group,
                    "hooks": [
                        {**h, "command": h["command"].replace(MEMESH, "/new/venv/bin/memesh")}
                        for h in group["hooks"]
                    ],
                }
                for group in groups
            ]
            for event, groups in HOOKS["hooks"].items()
        }
    }

    assert untrusted_memesh_hooks(HOOKS_FILE, moved, config) == [
        "SessionStart * session-start",
        "PreToolUse Bash pre-tool-use",
    ]
    # The same hooks in another file (a project's .codex/hooks.json) are trusted apart.
    assert len(untrusted_memesh_hooks(Path("/repo/.codex/hooks.json"), HOOKS, config)) == 2
