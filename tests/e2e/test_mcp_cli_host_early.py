"""A `memesh mcp` process takes its home's hooks as soon as Django is set up, before it builds
its MCP server (the SDK and every operation's schemas): the hooks an agent host fires while
the session's MCP server is still starting are run there rather than each in a process of
its own (api/mcp_server/management/commands/mcp.py).

The server's build is held here until the test lets it go, by a wrapper around the real
`build_server` that waits for a file: a hook answered meanwhile was run by a process whose
server was not built yet.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from api.cli import forward as cli_forward
from tests.processes import ROOT, STARTUP_DEADLINE, memesh, memesh_env

# A CLI process whose settings module does not exist cannot run a hook itself (it records a
# failure and prints nothing): an answer came from the MCP process.
NO_DJANGO = {"DJANGO_SETTINGS_MODULE": "memesh_tests.no_such_settings"}
HELD_MCP = """
import sys, time
from pathlib import Path
from api.mcp_server import server
gate = Path(sys.argv[1])
real = server.build_server
def build_server(**kwargs):
    while not gate.exists():
        time.sleep(0.01)
    return real(**kwargs)
server.build_server = build_server
from memesh_site import cli
cli.main(["mcp"])
"""


def test_a_hook_is_answered_by_the_mcp_process_before_its_server_is_built(
    tmp_path: Path,
) -> None:
    home, gate = tmp_path / "home", tmp_path / "build-now"
    env = memesh_env(home, MEMESH_EMBEDDER="none", MEMESH_WORKER="false")
    mcp = subprocess.Popen(
        [sys.executable, "-c", HELD_MCP, str(gate)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        record = home / cli_forward.HOSTS_DIRNAME / f"{mcp.pid}.json"
        deadline = time.monotonic() + STARTUP_DEADLINE
        while not record.exists() and mcp.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert record.exists(), "memesh mcp did not take commands before building its server"

        payload = {
            "session_id": "s-early",
            "transcript_path": str(tmp_path / "none.jsonl"),
            "cwd": str(ROOT),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
        hook = subprocess.run(
            memesh("hook", "session-start"),
            cwd=ROOT,
            env={**env, **NO_DJANGO},
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

        assert hook.returncode == 0
        assert json.loads(hook.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        assert not gate.exists() and mcp.poll() is None  # the server is still unbuilt
    finally:
        gate.touch()
        # End of input: the server stops and removes its record.
        _, stderr = mcp.communicate(input=b"", timeout=120)
    assert mcp.returncode == 0, stderr.decode()
    assert not record.exists()
