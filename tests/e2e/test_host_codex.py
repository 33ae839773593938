"""memesh inside the real Codex CLI (npm `@openai/codex`, pinned), installed from its registry,
set up by `memesh setup codex`, and driven by a scripted model on loopback
(tests/fakes/scripted_responses.py, the OpenAI Responses API) through two `codex exec` sessions
in a real git repository.

Codex needs no login with a model provider of its own: the provider (`base_url` on loopback,
`wire_api = "responses"`) is passed with `-c`, so the user's config.toml holds only what
`memesh setup codex` wrote, and the trust the user gives memesh's hooks (`/hooks`). The first
session is told "remember that …"; its model finds memesh's `remember` through Codex's tool
search, calls it, and commits through Codex's shell tool. The second starts in the same
project. What Codex sent the model is read from the requests the model server received; what
memesh stored, from `memesh recall --json` and the database.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.scripted_responses import (
    ScriptedResponses,
    Step,
    call,
    request_text,
    say,
    search,
    tool_names,
)
from tests.host_machine import PREAMBLE_START, ProjectMachine, memory_block
from tests.hosts import codex_trusts, npm_host_command

pytestmark = pytest.mark.slow

PACKAGE, VERSION = "@openai/codex", "0.169.0"
# A model Codex knows, so the session is the one a user of that model gets: plain function
# tools, and MCP tools behind `tool_search` (Codex's default model drives every tool through
# a JavaScript `exec` tool instead).
MODEL = "gpt-5.5"
NAMESPACE = "mcp__memesh"  # how Codex offers memesh's MCP tools
SEARCHED = ("remember", "recall", "briefing")
RULE = "Deploys go out on Tuesdays only"
LAST_REPLY = (
    "Recorded the deploy rule with remember and committed the README. Next: tell the release "
    "team that deploys go out on Tuesdays only, and move Friday's release to Tuesday."
)
COMMIT_SUBJECT = "Document the Tuesday deploy rule"
HOOKS = 8  # integrations/claude-code/hooks/hooks.json, which Codex gets too


@pytest.fixture(scope="session")
def codex() -> Path:
    """The pinned Codex CLI's `codex`, installed once (tests/hosts.py)."""
    return npm_host_command(PACKAGE, VERSION, "codex")


@dataclass
class Session:
    """One `codex exec --json` run: its events and the model requests it made."""

    events: list[dict[str, Any]]
    requests: list[dict[str, Any]]
    stderr: str

    @property
    def thread_id(self) -> str:
        (started,) = [e for e in self.events if e.get("type") == "thread.started"]
        return str(started["thread_id"])

    def items(self, kind: str) -> list[dict[str, Any]]:
        """The completed items of one kind (`mcp_tool_call`, `command_execution`, …)."""
        return [
            e["item"]
            for e in self.events
            if e.get("type") == "item.completed" and e["item"].get("type") == kind
        ]

    def diagnosis(self) -> str:
        """What a failed assertion shows: Codex's events and the end of its stderr."""
        return json.dumps(self.events, indent=1)[-6000:] + self.stderr[-3000:]


class Machine(ProjectMachine):
    """A user's machine: a HOME with memesh set up in Codex, a MEMESH_HOME, a project."""

    def __init__(self, root: Path, codex: Path) -> None:
        # The machine's own Codex home, settings and credentials stay out of the test.
        super().__init__(root, ("OPENAI_", "CODEX_"))
        self.codex = codex
        self.codex_home = self.user_home / ".codex"

    def codex_check(self) -> dict[str, Any]:
        """`memesh doctor`'s report on Codex."""
        report = json.loads(self.memesh("doctor", "--json", "--no-probe"))
        (check,) = [c for c in report["integrations"] if c["name"] == "codex"]
        return dict(check)

    def session(self, prompt: str, script: list[Step]) -> Session:
        with ScriptedResponses(script) as model:
            provider = f'{{name="scripted", base_url="{model.base_url}", wire_api="responses"}}'
            done = self.run(
                [str(self.codex), "exec", "--json", "-m", MODEL,
                 "-c", 'model_provider="scripted"', "-c", f"model_providers.scripted={provider}",
                 # Codex's workspace-write sandbox keeps .git read-only: the commit needs it.
                 "--sandbox", "workspace-write", "--add-dir", str(self.repo.root / ".git"),
                 # Nothing leaves the machine: no plugin sync, no connectors, no analytics.
                 "--disable", "plugins", "--disable", "apps", "--disable", "remote_plugin",
                 "-c", "analytics.enabled=false",
                 prompt],
            )  # fmt: skip
            requests = model.agent_requests()
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
        events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        return Session(events, requests, done.stderr)


def start_block(request: dict[str, Any]) -> str:
    """The SessionStart hook's block as Codex put it in front of the model: from the preamble
    to the end of its fenced memory ("" when the request has none)."""
    return memory_block(request_text(request))


def searched_tools(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tools Codex's tool search returned into `request`, by `<namespace>.<name>`."""
    found: dict[str, dict[str, Any]] = {}
    for item in request.get("input", []):
        if item.get("type") == "tool_search_output":
            for namespace in item.get("tools", []):
                for tool in namespace.get("tools", []):
                    found[f"{namespace.get('name')}.{tool.get('name')}"] = tool
    return found


def remember_the_rule(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The model's step after the tool search: call memesh's `remember`, which the search
    returned — or say that it did not."""
    if f"{NAMESPACE}.remember" not in searched_tools(request):
        return say(f"remember was not found: {sorted(searched_tools(request))}")(request)
    why = "Releases need the whole team around; holds while the team shares one office"
    arguments = {"name": "deploy-rule", "type": "decision", "observations": [RULE], "why": why}
    return call("remember", arguments, namespace=NAMESPACE)(request)


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory, codex: Path) -> Iterator[Machine]:
    machine = Machine(tmp_path_factory.mktemp("codex"), codex)
    machine.memesh("setup", "codex")
    yield machine


def test_codex_runs_memesh_s_tools_and_hooks_and_the_next_session_starts_with_them(
    machine: Machine,
) -> None:
    # Codex skips untrusted hooks without a word, and doctor says so until the user trusts
    # them in /hooks (recorded here as Codex records it).
    before = machine.codex_check()
    assert before["status"] == "warn", before
    assert f"Codex skips {HOOKS} of memesh's hooks until you trust them" in before["detail"]
    codex_trusts(machine.codex_home)
    assert machine.codex_check()["status"] == "ok"

    machine.repo.write("README.md", f"# Project\n\n{RULE}.\n")
    first = machine.session(
        f"Remember that {RULE.lower()}, and commit the README.",
        [
            search("memesh remember recall briefing", limit=30),
            remember_the_rule,
            call("exec_command", {"cmd": f"git commit -q -am '{COMMIT_SUBJECT}'"}),
            say(LAST_REPLY),
        ],
    )

    # The MCP server connected and its tools were there at the first step: the search
    # returned them with the schemas memesh publishes.
    assert len(first.requests) >= 4, first.diagnosis()
    assert "tool_search" in tool_names(first.requests[0]["tools"])
    found = searched_tools(first.requests[1])
    assert {f"{NAMESPACE}.{name}" for name in SEARCHED} <= set(found), first.diagnosis()
    assert "observations" in found[f"{NAMESPACE}.remember"]["parameters"]["properties"]

    # SessionStart's block reached the model (the hooks ran, trusted).
    opening_block = start_block(first.requests[0])
    assert opening_block.startswith(PREAMBLE_START), request_text(first.requests[0])[-3000:]

    # The `remember` call went through and is in memesh.
    (stored,) = first.items("mcp_tool_call")
    assert stored["server"] == "memesh" and stored["tool"] == "remember", stored
    assert stored["status"] == "completed" and not stored.get("error"), stored
    recalled = json.loads(machine.memesh("recall", "--json", "Tuesdays deploys"))
    by_name = {e["name"]: e for e in recalled["entities"]}
    assert by_name["deploy-rule"]["type"] == "decision"
    assert RULE in by_name["deploy-rule"]["observations"]
    # Codex declares `codex-mcp-client`: stamped with the host's name.
    assert by_name["deploy-rule"]["metadata"]["provenance"]["source_host"] == "codex"

    # The commit ran in Codex's sandbox; the prompt's "remember that …" is a note; the commit
    # through the shell tool is a commit memory; Stop stored the session's evidence, read from
    # Codex's rollout file.
    (commit,) = first.items("command_execution")
    assert commit["exit_code"] == 0, commit
    assert machine.repo.git("log", "-1", "--format=%s").strip() == COMMIT_SUBJECT
    notes = machine.entities("type = 'note'")
    assert any("tuesdays only" in " ".join(observations).lower() for *_, observations in notes)
    commits = machine.entities("type = 'commit'")
    assert any(COMMIT_SUBJECT in " ".join(observations) for *_, observations in commits), commits
    (session,) = machine.entities("name = ?", f"session-{first.thread_id}")
    assert session[1] == "session"
    assert "Tool calls: 3 (1 shell commands)" in session[2], session
    ((_, _, handoff),) = machine.entities("type = 'handoff'")
    assert handoff == [LAST_REPLY]

    # The next session in the project starts with what the first stored.
    second = machine.session("What is the deploy rule?", [say("Tuesdays only.")])
    block = start_block(second.requests[0])
    assert block.startswith(PREAMBLE_START), block
    for line in (
        f"[decision] {RULE} — why: ",
        f"[commit] {COMMIT_SUBJECT}",
        f"[handoff] {LAST_REPLY}",
    ):
        assert line in block, block
    assert second.items("agent_message")[-1]["text"] == "Tuesdays only."
