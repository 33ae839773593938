"""`memesh setup <host>` and `memesh doctor`'s Integrations section as a user runs them: real
processes with a HOME of their own (so ~/.claude, ~/.codex, ~/.gemini and ~/.cursor are under
the test's folder), against settings files that already hold the user's own entries. The MCP
command each host is given is read back and started with the official MCP client.

The hooks themselves (`memesh hook <event>`) are not run here: these tests check the files."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests import mcp_checks
from tests.hosts import codex_trusts
from tests.processes import PROCESS_DEADLINE, memesh, memesh_env

pytestmark = pytest.mark.slow  # each command is a Python + Django process

SESSION_DEADLINE = 120
# What `memesh setup` names: the entry point beside the interpreter that runs it.
ENTRY_POINT = str(Path(sys.executable).parent / "memesh")
HOOKS = 8  # integrations/claude-code/hooks/hooks.json

USERS_SETTINGS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "bar"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}],
    },
}
USERS_CLAUDE_JSON: dict[str, Any] = {
    "numStartups": 42,
    "projects": {"/work/app": {"allowedTools": []}},
    "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp", "args": []}},
}


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    """Each test's own HOME, in place of the module's (tests/e2e/conftest.py): `memesh setup`
    writes into it, so no test sees another's files."""
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def env_for(user_home: Path) -> dict[str, str]:
    """memesh's test environment with HOME at `user_home` and no host variable of this machine's
    (they would point the command at the real files)."""
    env = memesh_env(user_home.parent / "memesh-home", MEMESH_EMBEDDER="none", HOME=str(user_home))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        env.pop(name, None)
    return env


def run(user_home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        memesh(*args),
        cwd=cwd or user_home,
        env=env_for(user_home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PROCESS_DEADLINE,
        check=False,
    )


def setup(user_home: Path, *args: str, cwd: Path | None = None) -> dict[str, Any]:
    """`memesh setup ARGS --json`, which must succeed: its report."""
    done = run(user_home, "setup", *args, "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def write_json(path: Path, document: dict[str, Any], indent: int = 4) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, indent=indent) + "\n"
    path.write_text(text)
    return text


def memesh_commands(settings: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    return [
        (event, group.get("matcher"), handler["command"])
        for event, groups in settings["hooks"].items()
        for group in groups
        for handler in group["hooks"]
        if " hook " in handler["command"]
    ]


# --- Claude Code ---------------------------------------------------------------------------------


def test_setup_claude_code_keeps_the_users_own_hooks_and_keys(user_home: Path) -> None:
    settings_file = user_home / ".claude" / "settings.json"
    state_file = user_home / ".claude.json"
    settings_text = write_json(settings_file, USERS_SETTINGS)
    state_text = write_json(state_file, USERS_CLAUDE_JSON, indent=2)

    report = setup(user_home, "claude-code")

    settings = json.loads(settings_file.read_text())
    for key in ("model", "permissions", "env"):
        assert settings[key] == USERS_SETTINGS[key]
    # The user's hooks are where they were, memesh's follow them.
    assert settings["hooks"]["PreToolUse"][0] == USERS_SETTINGS["hooks"]["PreToolUse"][0]
    assert settings["hooks"]["Stop"][0] == USERS_SETTINGS["hooks"]["Stop"][0]
    commands = memesh_commands(settings)
    assert len(commands) == HOOKS
    assert ("Stop", None, f"{ENTRY_POINT} hook stop") in commands
    assert ("PreToolUse", "Edit|Write|MultiEdit", f"{ENTRY_POINT} hook pre-tool-use") in commands
    assert settings_file.read_text().startswith('{\n    "model"')  # the file's own indent

    state = json.loads(state_file.read_text())
    assert state["numStartups"] == 42 and state["projects"] == USERS_CLAUDE_JSON["projects"]
    assert state["mcpServers"]["github"] == USERS_CLAUDE_JSON["mcpServers"]["github"]
    assert state["mcpServers"]["memesh"] == {
        "type": "stdio",
        "command": ENTRY_POINT,
        "args": ["mcp"],
    }
    # The previous versions are kept beside them.
    assert (user_home / ".claude" / "settings.json.memesh-backup").read_text() == settings_text
    assert (user_home / ".claude.json.memesh-backup").read_text() == state_text
    assert report["changed"] is True and report["command"] == ENTRY_POINT
    assert {f["path"]: f["backup"] is not None for f in report["files"]} == {
        str(settings_file): True,
        str(state_file): True,
    }


def test_a_second_setup_says_already_set_up_and_touches_nothing(user_home: Path) -> None:
    write_json(user_home / ".claude" / "settings.json", USERS_SETTINGS)
    setup(user_home, "claude-code")
    files = [user_home / ".claude" / "settings.json", user_home / ".claude.json"]
    before = [(f.read_bytes(), f.stat().st_mtime_ns) for f in files]

    again = run(user_home, "setup", "claude-code")

    assert again.returncode == 0, again.stderr
    assert "memesh is already set up in Claude Code (user scope); nothing changed." in again.stdout
    assert [(f.read_bytes(), f.stat().st_mtime_ns) for f in files] == before


def test_a_dry_run_prints_the_diff_and_writes_nothing(user_home: Path) -> None:
    settings_file = user_home / ".claude" / "settings.json"
    original = write_json(settings_file, USERS_SETTINGS)

    done = run(user_home, "setup", "claude-code", "--dry-run")

    assert done.returncode == 0, done.stderr
    assert f"--- {settings_file}\n+++ {settings_file}\n" in done.stdout
    assert f'+                        "command": "{ENTRY_POINT} hook stop",' in done.stdout
    assert f"--- /dev/null\n+++ {user_home / '.claude.json'}\n" in done.stdout
    assert "Dry run: nothing was written." in done.stdout
    assert settings_file.read_text() == original
    assert not (user_home / ".claude.json").exists()
    assert not list(user_home.rglob("*.memesh-backup"))


def test_uninstall_removes_exactly_memeshs_entries(user_home: Path) -> None:
    write_json(user_home / ".claude" / "settings.json", USERS_SETTINGS)
    write_json(user_home / ".claude.json", USERS_CLAUDE_JSON)
    setup(user_home, "claude-code")

    report = setup(user_home, "claude-code", "--uninstall")

    assert report["action"] == "uninstall" and report["changed"] is True
    assert json.loads((user_home / ".claude" / "settings.json").read_text()) == USERS_SETTINGS
    assert json.loads((user_home / ".claude.json").read_text()) == USERS_CLAUDE_JSON
    # Nothing of memesh's left: a second uninstall has nothing to do.
    assert setup(user_home, "claude-code", "--uninstall")["changed"] is False


def test_a_file_that_is_not_json_is_refused_and_nothing_is_written(user_home: Path) -> None:
    settings_file = user_home / ".claude" / "settings.json"
    write_json(settings_file, USERS_SETTINGS)
    settings_text = settings_file.read_text()
    state_file = user_home / ".claude.json"
    state_file.write_text('{"numStartups": 42, // a comment\n}')  # JSON has no comments

    as_json = run(user_home, "setup", "claude-code", "--json")
    as_text = run(user_home, "setup", "claude-code")

    assert (as_json.returncode, as_text.returncode) == (1, 1)
    assert as_json.stdout == ""
    failure = json.loads(as_json.stderr.strip().splitlines()[-1])
    assert failure["success"] is False and failure["errorCode"] == "setup.invalid-config"
    assert str(state_file) in failure["error"] and "not valid JSON" in failure["error"]
    assert "not valid JSON (line 1" in as_text.stderr
    # The file read first, which was valid, was not written either.
    assert settings_file.read_text() == settings_text
    assert state_file.read_text() == '{"numStartups": 42, // a comment\n}'
    assert not list(user_home.rglob("*.memesh-backup"))


def test_the_project_scope_writes_the_repositorys_own_files(
    user_home: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "pkg").mkdir(parents=True)

    report = setup(user_home, "claude-code", "--project", cwd=repo / "src" / "pkg")

    assert {f["path"] for f in report["files"]} == {
        str(repo / ".claude" / "settings.json"),
        str(repo / ".mcp.json"),
    }
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    assert len(memesh_commands(settings)) == HOOKS
    servers = json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert servers["memesh"]["command"] == ENTRY_POINT
    assert not list(user_home.iterdir())  # the user's own files are untouched


def test_a_symlinked_settings_file_is_written_through_and_stays_a_link(user_home: Path) -> None:
    """A dotfiles repository links ~/.claude/settings.json to its own copy."""
    real = user_home / "dotfiles" / "claude-settings.json"
    write_json(real, USERS_SETTINGS)
    (user_home / ".claude").mkdir()
    (user_home / ".claude" / "settings.json").symlink_to(real)

    setup(user_home, "claude-code")

    assert (user_home / ".claude" / "settings.json").is_symlink()
    assert len(memesh_commands(json.loads(real.read_text()))) == HOOKS


def test_a_projects_file_that_leads_outside_the_project_is_refused(
    user_home: Path, tmp_path: Path
) -> None:
    """A repository's `.claude` could point at any JSON file of the user's."""
    write_json(user_home / ".claude" / "settings.json", USERS_SETTINGS)
    original = (user_home / ".claude" / "settings.json").read_text()
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".claude").symlink_to(user_home / ".claude")

    done = run(user_home, "setup", "claude-code", "--project", "--json", cwd=repo)

    assert done.returncode == 1
    assert json.loads(done.stderr.strip().splitlines()[-1])["errorCode"] == "setup.invalid-config"
    assert (user_home / ".claude" / "settings.json").read_text() == original
    assert not (repo / ".mcp.json").exists()


# --- Codex, Gemini CLI, Cursor -------------------------------------------------------------------

CODEX_CONFIG = """\
# Codex settings, by hand
model = "o4-mini"  # the fast one

[mcp_servers.docs]
command = "docs-mcp"
args = ["--stdio"]
"""


def test_codex_gets_its_toml_server_and_the_hooks_and_keeps_its_comments(user_home: Path) -> None:
    config_file = user_home / ".codex" / "config.toml"
    config_file.parent.mkdir()
    config_file.write_text(CODEX_CONFIG)

    setup(user_home, "codex")

    text = config_file.read_text()
    assert text.startswith(CODEX_CONFIG)  # the user's lines, comments and all, first
    config = tomllib.loads(text)
    assert config["mcp_servers"]["docs"] == {"command": "docs-mcp", "args": ["--stdio"]}
    # Codex hands an MCP server a whitelisted environment: memesh's variables are passed on
    # by name (MEMESH_HOME always, and each MEMESH_* set where setup ran).
    assert config["mcp_servers"]["memesh"] == {
        "command": ENTRY_POINT,
        "args": ["mcp"],
        "env_vars": ["MEMESH_HOME", "MEMESH_EMBEDDER"],
    }
    hooks = json.loads((user_home / ".codex" / "hooks.json").read_text())
    assert len(memesh_commands(hooks)) == HOOKS
    # Each names its host, so what it stores is stamped Codex's (Claude Code's name none).
    assert ("Stop", None, f"{ENTRY_POINT} hook stop --host codex") in memesh_commands(hooks)
    assert all(command.endswith(" --host codex") for _, _, command in memesh_commands(hooks))
    assert setup(user_home, "codex")["changed"] is False

    setup(user_home, "codex", "--uninstall")

    assert config_file.read_text() == CODEX_CONFIG
    assert not (user_home / ".codex" / "hooks.json").exists()  # it held memesh's hooks alone
    assert (user_home / ".codex" / "hooks.json.memesh-backup").exists()


def test_gemini_gets_the_hooks_it_runs_and_the_mcp_server_beside_the_users_own(
    user_home: Path,
) -> None:
    theirs: dict[str, Any] = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "mcpServers": {"other": {"command": "other-mcp"}},
        "hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "notify-send"}]}]},
    }
    config_file = user_home / ".gemini" / "settings.json"
    write_json(config_file, theirs, indent=2)

    report = setup(user_home, "gemini")

    assert [f["role"] for f in report["files"]] == ["hooks and mcp"]
    written = json.loads(config_file.read_text())
    assert written["security"] == theirs["security"]
    assert written["mcpServers"]["memesh"] == {"command": ENTRY_POINT, "args": ["mcp"]}
    assert written["hooks"]["AfterAgent"][0] == theirs["hooks"]["AfterAgent"][0]
    # Gemini CLI's event and tool names, its timeouts in milliseconds; no BeforeTool (its
    # context reaches no one) and no PreCompress (it fires before every model request). Each
    # names its host, so what it stores is stamped Gemini CLI's.
    hook, host = f"{ENTRY_POINT} hook", "--host gemini-cli"
    assert memesh_commands(written) == [
        ("AfterAgent", None, f"{hook} stop {host}"),
        ("SessionStart", None, f"{hook} session-start {host}"),
        ("BeforeAgent", None, f"{hook} user-prompt-submit {host}"),
        ("AfterTool", "run_shell_command", f"{hook} post-tool-use {host}"),
        ("AfterTool", "exit_plan_mode|ask_user", f"{hook} post-tool-use {host}"),
    ]
    assert written["hooks"]["SessionStart"][0]["hooks"][0]["timeout"] == 30_000
    assert not {"BeforeTool", "PreCompress", "PreToolUse", "Stop"} & set(written["hooks"])
    assert integrations(user_home)["gemini"]["detail"].startswith("user: 5/5 hooks + MCP server")
    setup(user_home, "gemini", "--uninstall")
    assert json.loads(config_file.read_text()) == theirs


def test_setup_gemini_writes_where_gemini_cli_home_puts_gemini_s_folder(user_home: Path) -> None:
    elsewhere = user_home.parent / "gemini-cli-home"
    done = subprocess.run(
        memesh("setup", "gemini", "--json"),
        cwd=user_home,
        env={**env_for(user_home), "GEMINI_CLI_HOME": str(elsewhere)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PROCESS_DEADLINE,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    [file] = json.loads(done.stdout)["files"]
    assert file["path"] == str(elsewhere / ".gemini" / "settings.json")
    assert "memesh" in json.loads(Path(file["path"]).read_text())["mcpServers"]
    assert not (user_home / ".gemini").exists()


@pytest.mark.parametrize(("host", "relative"), [("cursor", ".cursor/mcp.json")])
def test_cursor_gets_the_mcp_server_beside_the_users_own(
    user_home: Path, host: str, relative: str
) -> None:
    theirs: dict[str, Any] = {"theme": "dark", "mcpServers": {"other": {"command": "other-mcp"}}}
    config_file = user_home / relative
    write_json(config_file, theirs, indent=2)

    report = setup(user_home, host)

    assert [f["role"] for f in report["files"]] == ["mcp"]
    written = json.loads(config_file.read_text())
    assert (
        written["theme"] == "dark"
        and written["mcpServers"]["other"] == theirs["mcpServers"]["other"]
    )
    assert written["mcpServers"]["memesh"] == {"command": ENTRY_POINT, "args": ["mcp"]}
    setup(user_home, host, "--uninstall")
    assert json.loads(config_file.read_text()) == theirs


# --- what the hosts will run ---------------------------------------------------------------------

SERVER_OF = {
    "claude-code": lambda home: json.loads((home / ".claude.json").read_text())["mcpServers"],
    "codex": lambda home: tomllib.loads((home / ".codex" / "config.toml").read_text())[
        "mcp_servers"
    ],
    "gemini": lambda home: json.loads((home / ".gemini" / "settings.json").read_text())[
        "mcpServers"
    ],
    "cursor": lambda home: json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"],
}


@pytest.mark.parametrize("host", list(SERVER_OF))
def test_the_written_mcp_command_starts_memesh_mcp(user_home: Path, host: str) -> None:
    setup(user_home, host)
    server = SERVER_OF[host](user_home)["memesh"]
    project = user_home / "project"
    project.mkdir()
    # As the host starts it: the command and arguments from its file, in the project folder.
    params = StdioServerParameters(
        command=server["command"], args=server["args"], env=env_for(user_home), cwd=str(project)
    )

    async def session() -> set[str]:
        with anyio.fail_after(SESSION_DEADLINE):
            async with Client(
                params, mode="legacy", client_info=mcp_checks.client_info()
            ) as client:
                return {tool.name for tool in (await client.list_tools()).tools}

    tools = anyio.run(session)

    assert {"remember", "recall", "briefing"} <= tools


# --- memesh doctor -------------------------------------------------------------------------------


def integrations(user_home: Path, cwd: Path | None = None) -> dict[str, dict[str, Any]]:
    done = run(user_home, "doctor", "--json", "--no-probe", cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr  # an integration never fails it
    return {check["name"]: check for check in json.loads(done.stdout)["integrations"]}


def test_doctor_reports_each_integration_and_what_it_runs(user_home: Path) -> None:
    setup(user_home, "claude-code")
    setup(user_home, "cursor")

    report = integrations(user_home)

    assert list(report) == ["claude-code", "codex", "gemini", "cursor"]
    claude = report["claude-code"]
    assert claude["status"] == "ok" and claude["data"]["installed"] is True
    [user] = claude["data"]["scopes"]
    assert user["scope"] == "user" and user["mcpServer"] is True
    assert user["hooks"] == {"expected": HOOKS, "present": HOOKS, "missing": []}
    assert user["commands"] == [{"path": ENTRY_POINT, "exists": True, "thisMemesh": True}]
    # Paths under the user_home directory are shown as ~ (a report is pasted into bug reports).
    assert {f["path"] for f in user["files"]} == {"~/.claude/settings.json", "~/.claude.json"}
    assert "8/8 hooks + MCP server" in claude["detail"]
    assert report["cursor"]["status"] == "ok" and report["cursor"]["data"]["installed"] is True
    assert report["codex"] == {
        "name": "codex",
        "status": "ok",
        "detail": "not set up (`memesh setup codex` sets up Codex CLI)",
        "data": {"installed": False, "scopes": []},
    }


def test_doctor_warns_about_a_missing_command_and_missing_hooks(user_home: Path) -> None:
    setup(user_home, "claude-code")
    state_file = user_home / ".claude.json"
    state = json.loads(state_file.read_text())
    state["mcpServers"]["memesh"]["command"] = "/gone/venv/bin/memesh"
    state_file.write_text(json.dumps(state))
    settings_file = user_home / ".claude" / "settings.json"
    settings = json.loads(settings_file.read_text())
    del settings["hooks"]["PreCompact"]
    settings_file.write_text(json.dumps(settings))

    claude = integrations(user_home)["claude-code"]

    assert claude["status"] == "warn"
    [user] = claude["data"]["scopes"]
    assert user["hooks"]["missing"] == ["PreCompact * pre-compact"]
    assert {"path": "/gone/venv/bin/memesh", "exists": False, "thisMemesh": False} in user[
        "commands"
    ]
    assert "/gone/venv/bin/memesh does not exist" in claude["detail"]
    assert "1 of memesh's 8 hooks are missing" in claude["detail"]


def test_doctor_reports_codex_hooks_codex_will_not_run_until_they_are_trusted(
    user_home: Path,
) -> None:
    done = run(user_home, "setup", "codex")
    assert done.returncode == 0, done.stderr
    # The setup ends by saying so, and how to trust them.
    assert f"Codex will not run {HOOKS} of memesh's hooks until you trust them" in done.stdout
    assert "run `codex` and trust them in /hooks" in done.stdout

    codex = integrations(user_home)["codex"]

    assert codex["status"] == "warn"
    [user] = codex["data"]["scopes"]
    assert len(user["hooks"]["untrusted"]) == HOOKS
    assert f"Codex skips {HOOKS} of memesh's hooks until you trust them" in codex["detail"]
    assert "/hooks" in codex["detail"]

    codex_trusts(user_home / ".codex")

    codex = integrations(user_home)["codex"]
    assert codex["status"] == "ok", codex["detail"]
    assert "untrusted" not in codex["data"]["scopes"][0]["hooks"]
    again = run(user_home, "setup", "codex")
    assert again.returncode == 0 and "nothing changed" in again.stdout
    assert "trust" not in again.stdout


def without_host_options(hooks_file: Path) -> None:
    """memesh's hooks in `hooks_file` as an earlier `memesh setup` wrote them: naming no
    `--host`."""
    document = json.loads(hooks_file.read_text())
    for groups in document["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                handler["command"] = handler["command"].split(" --host ")[0]
    hooks_file.write_text(json.dumps(document, indent=2))


def test_doctor_reports_codex_hooks_an_earlier_setup_wrote_without_their_host(
    user_home: Path,
) -> None:
    setup(user_home, "codex")
    hooks_file = user_home / ".codex" / "hooks.json"
    assert all(
        c.endswith(" --host codex") for *_, c in memesh_commands(json.loads(hooks_file.read_text()))
    )
    without_host_options(hooks_file)
    codex_trusts(user_home / ".codex")  # the user trusted the earlier hooks

    codex = integrations(user_home)["codex"]

    assert codex["status"] == "warn"
    [user] = codex["data"]["scopes"]
    assert len(user["hooks"]["outOfDate"]) == HOOKS and "untrusted" not in user["hooks"]
    assert f"{HOOKS} of memesh's hooks are out of date" in codex["detail"]
    assert "name `--host codex`" in codex["detail"]
    assert (
        "run `memesh setup codex` again, then run `codex` and trust them in /hooks"
        in (codex["detail"])
    )

    setup(user_home, "codex")  # the fix the doctor names

    codex = integrations(user_home)["codex"]
    assert "outOfDate" not in codex["data"]["scopes"][0]["hooks"], codex["detail"]
    assert "out of date" not in codex["detail"]
    # Rewritten, the hooks are changed ones to Codex: trusted again in /hooks.
    assert len(codex["data"]["scopes"][0]["hooks"]["untrusted"]) == HOOKS


def test_doctor_reports_gemini_hooks_an_earlier_setup_wrote_without_their_host(
    user_home: Path,
) -> None:
    setup(user_home, "gemini")
    without_host_options(user_home / ".gemini" / "settings.json")

    gemini = integrations(user_home)["gemini"]

    assert gemini["status"] == "warn"
    [user] = gemini["data"]["scopes"]
    assert len(user["hooks"]["outOfDate"]) == user["hooks"]["expected"]
    assert "should name `--host gemini-cli`" in gemini["detail"]
    assert "run `memesh setup gemini` again" in gemini["detail"]
    assert "/hooks" not in gemini["detail"]

    setup(user_home, "gemini")

    gemini = integrations(user_home)["gemini"]
    assert gemini["status"] == "ok", gemini["detail"]
    assert "outOfDate" not in gemini["data"]["scopes"][0]["hooks"]


def test_doctor_checks_the_projects_own_files_from_inside_the_repository(
    user_home: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    setup(user_home, "gemini", "--project", cwd=repo)

    inside = integrations(user_home, cwd=repo)["gemini"]
    elsewhere = integrations(user_home)["gemini"]

    assert [s["scope"] for s in inside["data"]["scopes"]] == ["project"]
    assert elsewhere["data"]["installed"] is False
