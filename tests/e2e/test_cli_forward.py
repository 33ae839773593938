"""Short `memesh` commands are run by the `memesh serve` of their home when one is running
(api/cli/forward.py): same output, exit status and project as in process, and in
process whenever the server cannot stand in for this process.

A CLI process whose Django settings module does not exist cannot run a command itself, so
when it succeeds, the server ran it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx

from api.cli import forward as cli_forward
from tests.processes import ROOT, Served, memesh, memesh_env, serving

NO_DJANGO = {"DJANGO_SETTINGS_MODULE": "memesh_tests.no_such_settings"}


def cli(
    home: Path, *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {**memesh_env(home, MEMESH_EMBEDDER="none"), **(env or {})}
    return subprocess.run(
        memesh(*args), cwd=cwd, env=full, capture_output=True, text=True, timeout=120, check=False
    )


def git_repo(path: Path, origin: str) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", origin], check=True)
    return path


def test_the_server_runs_a_remember_and_a_recall_for_the_cli(server: Served, home: Path) -> None:
    stored = cli(
        home, "remember", "--name", "fwd-a", "--type", "note", "--obs", "kestrel", env=NO_DJANGO
    )
    # Unsourced, so a hypothesis (docs/trust.md): the CLI says which.
    assert (stored.returncode, stored.stdout.strip()) == (0, "Stored: fwd-a (hypothesis)"), (
        stored.stderr
    )
    found = cli(home, "recall", "kestrel", "--json", env=NO_DJANGO)
    assert found.returncode == 0, found.stderr
    assert [e["name"] for e in json.loads(found.stdout)["entities"]] == ["fwd-a"]
    # The trust model's short commands are forwarded too.
    observed = cli(home, "observe", "--name", "fwd-a", "--source", "README.md", env=NO_DJANGO)
    assert observed.returncode == 0, observed.stderr
    assert observed.stdout.startswith("Promoted to fact: fwd-a"), observed.stdout
    listed = cli(home, "memories", "--json", env=NO_DJANGO)
    assert listed.returncode == 0, listed.stderr
    assert [m["name"] for m in json.loads(listed.stdout)["memories"]] == ["fwd-a"]


def test_a_forwarded_command_keeps_the_cli_s_errors_and_exit_statuses(
    server: Served, home: Path
) -> None:
    usage = cli(home, "recall", "--bogus", env=NO_DJANGO)
    assert usage.returncode == 2
    assert "unrecognized arguments: --bogus" in usage.stderr
    assert usage.stdout == ""
    refused = cli(home, "remember", "--name", "x", "--json", env=NO_DJANGO)
    local = cli(home, "remember", "--name", "x", "--json", env={"MEMESH_CLI_LOCAL": "1"})
    assert refused.returncode == local.returncode == 1
    assert json.loads(refused.stderr) == json.loads(local.stderr)
    assert json.loads(refused.stderr)["success"] is False
    helped = cli(home, "--help", env=NO_DJANGO)
    assert helped.returncode == 0
    assert "recall" in helped.stdout and "Available subcommands" in helped.stdout


def test_the_project_is_the_cli_s_directory_not_the_server_s(
    server: Served, home: Path, tmp_path: Path
) -> None:
    repo = git_repo(tmp_path / "widget", "git@github.com:acme/widget.git")
    briefing = cli(home, "briefing", "--json", cwd=repo, env=NO_DJANGO)
    assert briefing.returncode == 0, briefing.stderr
    assert json.loads(briefing.stdout)["project"] == "acme/widget"


def test_the_output_is_the_same_as_in_process(server: Served, home: Path) -> None:
    cli(home, "remember", "--name", "same", "--type", "note", "--obs", "alpha beta")
    forwarded = cli(home, "recall", "alpha")
    local = cli(home, "recall", "alpha", env={"MEMESH_CLI_LOCAL": "1"})
    assert forwarded.returncode == local.returncode == 0
    assert forwarded.stdout == local.stdout


def test_a_command_the_server_does_not_run_stays_in_process(server: Served, home: Path) -> None:
    # export is not forwarded: without its own Django, this process cannot run it at all.
    failed = cli(home, "export", env=NO_DJANGO)
    assert failed.returncode != 0
    assert "memesh_tests" in failed.stderr


def test_another_memesh_environment_is_not_answered_by_this_server(
    server: Served, home: Path
) -> None:
    env = memesh_env(home, MEMESH_EMBEDDER="none")
    assert cli_forward.forward(["recall", "x"], env) is not None
    assert cli_forward.forward(["recall", "x"], {**env, "MEMESH_EMBEDDER": "local"}) is None
    assert cli_forward.forward(["recall", "x"], {**env, "MEMESH_CLI_LOCAL": "1"}) is None
    assert cli_forward.forward(["recall", "x"], {**env, "MEMESH_DB_PATH": "/tmp/other.db"}) is None
    # Where the agent hosts keep their session files is part of a command's context too.
    assert cli_forward.forward(["recall", "x"], {**env, "CLAUDE_CONFIG_DIR": "/elsewhere"}) is None
    assert cli_forward.forward(["recall", "x"], {**env, "CODEX_HOME": "/elsewhere"}) is None


def test_without_a_running_server_commands_run_in_process(tmp_path: Path) -> None:
    alone = tmp_path / "alone"
    with serving(alone, tmp_path / "serve.log", "--no-worker", MEMESH_EMBEDDER="none"):
        assert (alone / cli_forward.RUNTIME_FILENAME).exists()
    assert not (alone / cli_forward.RUNTIME_FILENAME).exists()
    assert cli_forward.forward(["recall", "x"], memesh_env(alone, MEMESH_EMBEDDER="none")) is None
    stored = cli(alone, "remember", "--name", "alone", "--type", "note", "--obs", "o")
    assert stored.returncode == 0, stored.stderr


def test_the_cli_route_answers_only_its_own_user(server: Served, home: Path) -> None:
    record = json.loads((home / cli_forward.RUNTIME_FILENAME).read_text())
    assert (home / cli_forward.RUNTIME_FILENAME).stat().st_mode & 0o077 == 0
    body = {"argv": ["recall", "x"], "cwd": str(ROOT)}
    no_token = httpx.post(f"{server.base}{cli_forward.CLI_PATH}", json=body)
    assert no_token.status_code == 404
    wrong = httpx.post(
        f"{server.base}{cli_forward.CLI_PATH}", json=body, headers={cli_forward.TOKEN_HEADER: "x"}
    )
    assert wrong.status_code == 404
    headers = {cli_forward.TOKEN_HEADER: record["token"]}
    other = httpx.post(
        f"{server.base}{cli_forward.CLI_PATH}",
        json={"argv": ["createreviewer", "mallory"], "cwd": str(ROOT)},
        headers=headers,
    )
    assert other.status_code == 400
    assert other.json()["errorCode"] == "validation.bad-body"
    ran = httpx.post(f"{server.base}{cli_forward.CLI_PATH}", json=body, headers=headers)
    assert ran.status_code == 200
    assert ran.json()["exit"] == 0


# Each forwarded command that reads the caller's directory (its project, its repository).
PROJECT_AWARE = [
    ("briefing", "--json"),
    ("briefing", "--index", "--json"),
    ("recall", "heron", "--json"),
    ("patterns", "--json"),
    ("ping", "--json"),
]


def test_a_project_aware_command_answers_the_same_forwarded_or_not(
    server: Served, home: Path, tmp_path: Path
) -> None:
    """Run from a repository that is not the server's directory, each command gives the
    answer it gives in process: the server binds the caller's directory, not its own."""
    repo = git_repo(tmp_path / "gadget", "git@github.com:acme/gadget.git")
    stored = cli(home, "remember", "--name", "heron-note", "--type", "decision", "--obs",
                 "heron feeds at dawn", "--json", cwd=repo, env=NO_DJANGO)  # fmt: skip
    assert stored.returncode == 0, stored.stderr
    for args in PROJECT_AWARE:
        forwarded = cli(home, *args, cwd=repo, env=NO_DJANGO)
        local = cli(home, *args, cwd=repo, env={"MEMESH_CLI_LOCAL": "1"})
        assert forwarded.returncode == local.returncode == 0, (args, forwarded.stderr)
        assert json.loads(forwarded.stdout) == json.loads(local.stdout), args
    index = json.loads(cli(home, "briefing", "--index", "--json", cwd=repo, env=NO_DJANGO).stdout)
    assert index["project"] == "acme/gadget"
