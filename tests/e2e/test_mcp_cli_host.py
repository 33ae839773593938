"""A `memesh mcp` process runs the short CLI commands and hooks of its home while no
`memesh serve` does (api/cli/host.py): an agent host's session keeps it running, and its
hooks are `memesh hook` processes.

As in test_cli_forward.py, a CLI process whose Django settings module does not exist cannot
run a command itself: when it succeeds, another process ran it.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import httpx

from api.cli import forward as cli_forward
from tests.processes import ROOT, STARTUP_DEADLINE, StdioServer, memesh, memesh_env

NO_DJANGO = {"DJANGO_SETTINGS_MODULE": "memesh_tests.no_such_settings"}
SESSION_START = {
    "session_id": "s-host",
    "transcript_path": "/tmp/none.jsonl",
    "cwd": str(ROOT),
    "hook_event_name": "SessionStart",
    "source": "startup",
}


def cli(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        memesh(*args),
        cwd=ROOT,
        env={**memesh_env(home, MEMESH_EMBEDDER="none"), **NO_DJANGO},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def host_records(home: Path) -> list[Path]:
    directory = home / cli_forward.HOSTS_DIRNAME
    return sorted(directory.glob("*.json")) if directory.exists() else []


def test_the_mcp_process_runs_commands_and_hooks_and_removes_its_record(tmp_path: Path) -> None:
    home = tmp_path / "home"
    # A record left by an MCP process killed outright (no such process now): swept away.
    hosts = home / cli_forward.HOSTS_DIRNAME
    hosts.mkdir(parents=True)
    hosts.chmod(0o700)
    dead = subprocess.Popen(["true"])
    dead.wait()
    (hosts / f"{dead.pid}.json").write_text(json.dumps({"pid": dead.pid, "port": 1}))
    server = StdioServer(home)
    try:
        server.initialize("host-test")
        # `initialize` is answered before the server has loaded (api/mcp_server/early_stdio.py);
        # it records itself once it serves.
        record_path = home / cli_forward.HOSTS_DIRNAME / f"{server.proc.pid}.json"
        deadline = time.monotonic() + STARTUP_DEADLINE
        while host_records(home) != [record_path] and time.monotonic() < deadline:
            time.sleep(0.02)
        assert host_records(home) == [record_path]
        assert record_path.stat().st_mode & 0o077 == 0
        stored = cli(home, "remember", "--name", "host-a", "--type", "note", "--obs", "kestrel")
        assert (stored.returncode, stored.stdout.strip()) == (0, "Stored: host-a (hypothesis)"), (
            stored.stderr
        )
        found = cli(home, "recall", "kestrel", "--json")
        assert found.returncode == 0, found.stderr
        assert [e["name"] for e in json.loads(found.stdout)["entities"]] == ["host-a"]
        # A hook: its stdin travels with the request, its answer is Claude Code's JSON.
        hook = cli(home, "hook", "session-start", stdin=json.dumps(SESSION_START))
        assert hook.returncode == 0
        context = json.loads(hook.stdout)["hookSpecificOutput"]
        assert context["hookEventName"] == "SessionStart"
        assert "```memesh-memory" in context["additionalContext"]
        assert not (home / "hook-outcomes.jsonl").exists()  # nothing failed on the way

        # Only the token's holder, and only the CLI route.
        record = json.loads(record_path.read_text())
        base = f"http://127.0.0.1:{record['port']}"
        body = {"argv": ["recall", "x"], "cwd": str(ROOT)}
        assert httpx.post(f"{base}{cli_forward.CLI_PATH}", json=body).status_code == 404
        headers = {cli_forward.TOKEN_HEADER: record["token"]}
        assert httpx.post(f"{base}/v1/recall", json=body, headers=headers).status_code == 404
        refused = httpx.post(
            f"{base}{cli_forward.CLI_PATH}",
            json={"argv": ["createreviewer", "mallory"], "cwd": str(ROOT)},
            headers=headers,
        )
        assert (refused.status_code, refused.json()["errorCode"]) == (400, "validation.bad-body")
        # The MCP protocol on stdout is untouched by the commands it ran.
        listed = server.request(2, "tools/list")
        assert any(tool["name"] == "recall" for tool in listed["result"]["tools"])
    finally:
        code, stderr = server.close()
    assert code == 0, stderr
    assert host_records(home) == []
    # With the session over, a command runs in its own process again (and cannot, here).
    alone = cli(home, "recall", "kestrel")
    assert alone.returncode != 0
    assert "memesh_tests" in alone.stderr


def test_mcp_runs_no_commands_when_turned_off(tmp_path: Path) -> None:
    home = tmp_path / "home"
    server = StdioServer(home, MEMESH_MCP_RUNS_CLI="false")
    try:
        server.initialize("host-off")
        assert host_records(home) == []
    finally:
        code, stderr = server.close()
    assert code == 0, stderr
