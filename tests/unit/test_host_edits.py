"""hosts/edits.py and the plugin it renders from: memesh's entries go in and come
out of a host's configuration, and nothing of the user's changes."""

from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from hosts import edits
from hosts.documents import HostConfigInvalid, dump_json
from hosts.plugin import hook_specs, mcp_server, memesh_hook_argv, plugin_dir
from hosts.setup import server_entry
from tests.processes import ROOT

MEMESH = "/opt/memesh env/bin/memesh"  # a space: the command must be quoted for the shell
PATH = Path("settings.json")

USERS_SETTINGS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]},
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}

# The hook interface the `memesh hook` handlers implement (wt-hooks): event, matcher, command.
INTERFACE = [
    ("SessionStart", None, "session-start"),
    ("UserPromptSubmit", None, "user-prompt-submit"),
    ("PreToolUse", "Edit|Write|MultiEdit", "pre-tool-use"),
    ("PreToolUse", "Bash", "pre-tool-use"),
    ("PostToolUse", "Bash", "post-tool-use"),
    ("PostToolUse", "ExitPlanMode|AskUserQuestion", "post-tool-use"),
    ("Stop", None, "stop"),
    ("PreCompact", None, "pre-compact"),
]


def installed(document: dict[str, Any]) -> dict[str, Any]:
    return edits.with_memesh_hooks(document, hook_specs(), MEMESH)


def test_the_plugin_holds_exactly_the_hook_interface() -> None:
    assert [(s.event, s.matcher, s.subcommand) for s in hook_specs()] == INTERFACE
    assert all(s.timeout for s in hook_specs())  # a hung hook must not block the host forever


def test_the_plugin_manifests_name_memesh_and_its_server_runs_memesh_mcp() -> None:
    plugin = plugin_dir()
    manifest = json.loads((plugin / ".claude-plugin" / "plugin.json").read_text())
    marketplace = json.loads((plugin / ".claude-plugin" / "marketplace.json").read_text())
    assert manifest["name"] == "memesh"
    assert [(p["name"], p["source"]) for p in marketplace["plugins"]] == [("memesh", "./")]
    assert mcp_server("memesh") == {"command": "memesh", "args": ["mcp"]}


def test_the_wheel_carries_every_plugin_file() -> None:
    """hosts/integrations is integrations/ (a symlink), and pyproject's package-data
    patterns match every file of the plugin (a glob's `*` skips names starting with a dot, so
    those are named)."""
    link = ROOT / "hosts" / "integrations"
    assert link.is_symlink() and link.resolve() == (ROOT / "integrations").resolve()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packaged = {
        path
        for pattern in config["package-data"]["hosts.integrations"]
        for path in link.glob(pattern)
    }
    on_disk = {p for p in (link / "claude-code").rglob("*") if p.is_file()}
    assert on_disk and packaged == on_disk
    assert plugin_dir().resolve() == link.resolve() / "claude-code"


def test_installing_keeps_the_users_keys_and_hooks_and_adds_one_group_per_hook() -> None:
    result = installed(copy.deepcopy(USERS_SETTINGS))

    assert result["model"] == "opus" and result["permissions"] == USERS_SETTINGS["permissions"]
    assert result["hooks"]["Notification"] == USERS_SETTINGS["hooks"]["Notification"]
    # The user's group comes first and is untouched; memesh's follow it.
    assert result["hooks"]["PreToolUse"][0] == USERS_SETTINGS["hooks"]["PreToolUse"][0]
    assert len(edits.memesh_hooks(result)) == len(INTERFACE)
    stop = result["hooks"]["Stop"][0]["hooks"][0]
    assert stop["command"] == "'/opt/memesh env/bin/memesh' hook stop"
    assert memesh_hook_argv(stop["command"]) == [MEMESH, "hook", "stop"]


def test_installing_twice_changes_nothing() -> None:
    once = installed(copy.deepcopy(USERS_SETTINGS))
    assert installed(once) is once


def test_a_stale_memesh_path_is_replaced_not_run_beside_the_new_one() -> None:
    old = edits.with_memesh_hooks(copy.deepcopy(USERS_SETTINGS), hook_specs(), "/old/bin/memesh")

    result = installed(old)

    executables = {call[2] for call in edits.memesh_hook_calls(result)}
    assert executables == {MEMESH}
    assert len(edits.memesh_hooks(result)) == len(INTERFACE)


def test_uninstalling_removes_exactly_memeshs_entries() -> None:
    assert edits.without_memesh_hooks(installed(copy.deepcopy(USERS_SETTINGS))) == USERS_SETTINGS
    # A file that held only memesh's hooks keeps no empty lists or objects behind.
    assert edits.without_memesh_hooks(installed({"model": "x"})) == {"model": "x"}


def test_a_memesh_handler_the_user_put_in_a_group_of_their_own_goes_alone() -> None:
    mine = {"type": "command", "command": "./check.sh"}
    theirs = {
        "hooks": {"Stop": [{"hooks": [mine, {"type": "command", "command": "memesh hook stop"}]}]}
    }

    assert edits.without_memesh_hooks(theirs) == {"hooks": {"Stop": [{"hooks": [mine]}]}}


@pytest.mark.parametrize(
    "command",
    ["memesh-other hook stop", "echo memesh hook", "/bin/memesh mcp", "'unbalanced", 42],
)
def test_only_memesh_hook_commands_are_memeshs(command: object) -> None:
    assert memesh_hook_argv(command) is None


@pytest.mark.parametrize(
    "hooks",
    [
        [],
        {"Stop": {}},
        {"Stop": ["not a group"]},
        {"Stop": [{"hooks": "x"}]},
        {"Stop": [{"hooks": [1]}]},
    ],
)
def test_a_hooks_value_of_another_shape_is_refused(hooks: object) -> None:
    with pytest.raises(HostConfigInvalid):
        edits.check_hooks_shape(PATH, {"hooks": hooks})


def test_the_mcp_server_is_merged_beside_the_users_servers_and_keeps_their_additions() -> None:
    document = {
        "mcpServers": {"other": {"command": "x"}, "memesh": {"command": "/old", "env": {"A": "1"}}}
    }
    server = server_entry("claude-code", MEMESH)

    result = edits.with_json_server(document, server)

    assert result["mcpServers"]["other"] == {"command": "x"}
    assert result["mcpServers"]["memesh"] == {
        "command": MEMESH,
        "env": {"A": "1"},
        "type": "stdio",
        "args": ["mcp"],
    }
    assert edits.with_json_server(result, server) is result
    assert edits.without_json_server(result) == {"mcpServers": {"other": {"command": "x"}}}
    assert edits.without_json_server({"mcpServers": {"memesh": {}}}) == {}


def test_the_codex_server_keeps_the_files_comments_and_comes_out_cleanly() -> None:
    original = (
        "# my Codex settings\n"
        'model = "o4-mini"  # the fast one\n'
        "\n"
        "[mcp_servers.docs]\n"
        'command = "docs-mcp"\n'
        "\n"
        "[features]\n"
        "web_search = true\n"
    )
    document = tomlkit.parse(original)
    edits.set_toml_server(PATH, document, mcp_server(MEMESH))
    text = tomlkit.dumps(document)

    assert "# my Codex settings" in text and "# the fast one" in text
    parsed = tomllib.loads(text)
    assert parsed["mcp_servers"]["memesh"] == {"command": MEMESH, "args": ["mcp"]}
    assert parsed["mcp_servers"]["docs"] == {"command": "docs-mcp"}
    assert edits.toml_server(PATH, document) == {"command": MEMESH, "args": ["mcp"]}

    again = tomlkit.parse(text)
    edits.remove_toml_server(PATH, again)
    assert tomlkit.dumps(again) == original


def test_a_codex_config_without_servers_gains_only_memeshs_table() -> None:
    document = tomlkit.parse('model = "o4-mini"\n')
    edits.set_toml_server(PATH, document, mcp_server(MEMESH))

    assert "[mcp_servers]\n" not in tomlkit.dumps(document)
    edits.remove_toml_server(PATH, document)
    assert tomllib.loads(tomlkit.dumps(document)) == {"model": "o4-mini"}


def test_json_is_written_with_the_files_own_indentation() -> None:
    assert (
        dump_json({"a": [1]}, like='{\n    "a": []\n}\n') == '{\n    "a": [\n        1\n    ]\n}\n'
    )
    assert dump_json({"a": 1}, like='{\n\t"a": 0\n}') == '{\n\t"a": 1\n}\n'
    assert dump_json({"a": 1}, like=None) == '{\n  "a": 1\n}\n'


def test_codex_env_vars_keep_the_users_names_and_add_memeshs_once() -> None:
    current = {"command": MEMESH, "args": ["mcp"], "env_vars": ["OPENAI_API_KEY", "MEMESH_HOME"]}

    merged = edits.with_env_vars(PATH, current, ["MEMESH_HOME", "MEMESH_EMBEDDER"])

    assert merged == ["OPENAI_API_KEY", "MEMESH_HOME", "MEMESH_EMBEDDER"]
    assert edits.with_env_vars(PATH, {**current, "env_vars": merged}, ["MEMESH_HOME"]) == merged
    assert edits.with_env_vars(PATH, None, ["MEMESH_HOME"]) == ["MEMESH_HOME"]
    with pytest.raises(HostConfigInvalid, match="env_vars"):
        edits.with_env_vars(PATH, {"env_vars": "MEMESH_HOME"}, ["MEMESH_HOME"])
