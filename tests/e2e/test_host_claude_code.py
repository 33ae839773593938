"""memesh inside the real Claude Code (npm `@anthropic-ai/claude-code`, pinned), installed from
its registry, set up by `memesh setup claude-code`, and driven by a scripted model on loopback
(tests/fakes/scripted_model.py) through two non-interactive sessions in a real git repository.

The first session is told "remember that …"; its model finds memesh's `remember` through Claude
Code's tool search, calls it, and commits through the Bash tool. The second starts in the same
project. What Claude Code sent the model is read from the requests the model server received;
what memesh stored, from `memesh recall --json` and the database.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.scripted_model import ScriptedModel, Step, call, offered_tools, request_text, say
from tests.host_machine import PREAMBLE_START, ProjectMachine, memory_block
from tests.hosts import npm_host_command

pytestmark = pytest.mark.slow

PACKAGE, VERSION = "@anthropic-ai/claude-code", "2.1.328"
REMEMBER = "mcp__memesh__remember"
# The tools the session's model loads through Claude Code's tool search.
SEARCHED = (REMEMBER, "mcp__memesh__recall", "mcp__memesh__briefing")
RULE = "Deploys go out on Tuesdays only"
# The session's last reply, long enough for Stop to keep it as the project's handoff.
LAST_REPLY = (
    f"Recorded the deploy rule with {REMEMBER} and committed the README. Next: tell the "
    "release team that deploys go out on Tuesdays only, and move Friday's release to Tuesday."
)
COMMIT_SUBJECT = "Document the Tuesday deploy rule"
# A hook run as Claude Code's debug log reports it: the event and the exit status.
HOOK_RUN = re.compile(r"Hooks: (\S+) \[[^\]]*memesh hook [a-z-]+\] finished with status (-?\d+)")
# Claude Code asks before it runs a tool; `-p` cannot ask, so the session grants these upfront
# as a user would in settings (memesh's MCP tools, and git commits through Bash).
ALLOWED_TOOLS = ("mcp__memesh", "Bash(git commit:*)")


@pytest.fixture(scope="session")
def claude() -> Path:
    """The pinned Claude Code's `claude`, installed once (tests/hosts.py)."""
    return npm_host_command(PACKAGE, VERSION, "claude")


@dataclass
class Session:
    """One `claude -p` run: its stream-json events and the model requests it made."""

    events: list[dict[str, Any]]
    requests: list[dict[str, Any]]
    stderr: str
    debug_log: str  # Claude Code's own log of the session (--debug-file)

    @property
    def session_id(self) -> str:
        (init,) = [e for e in self.events if e.get("subtype") == "init"]
        return str(init["session_id"])

    @property
    def result(self) -> dict[str, Any]:
        return next(e for e in self.events if e.get("type") == "result")

    def diagnosis(self) -> str:
        """What a failed assertion shows: the MCP servers' state at start, the model's steps
        and the tool results Claude Code sent back, and Claude Code's stderr."""
        (init,) = [e for e in self.events if e.get("subtype") == "init"]
        steps = [
            e["message"]["content"] for e in self.events if e.get("type") in ("assistant", "user")
        ]
        return (
            json.dumps({"mcp_servers": init.get("mcp_servers"), "steps": steps}, indent=1)[:6000]
            + self.stderr[-3000:]
        )

    def hook_responses(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("subtype") == "hook_response"]


class Machine(ProjectMachine):
    """A user's machine: a HOME with memesh set up in Claude Code, a MEMESH_HOME, a project."""

    def __init__(self, root: Path, claude: Path) -> None:
        # The machine's own Claude Code settings and credentials stay out of the test.
        super().__init__(root, ("ANTHROPIC_", "CLAUDE_"))
        self.claude = claude
        self.logs = root / "claude-logs"
        self.logs.mkdir()

    def session(self, prompt: str, script: list[Step]) -> Session:
        debug_file = self.logs / f"session-{len(list(self.logs.iterdir())) + 1}.log"
        with ScriptedModel(script) as model:
            env = {
                **self.env,
                "ANTHROPIC_BASE_URL": model.url,
                "ANTHROPIC_API_KEY": "dummy",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            }
            done = self.run(
                [str(self.claude), "-p", prompt, "--output-format", "stream-json", "--verbose",
                 "--debug-file", str(debug_file), "--allowedTools", *ALLOWED_TOOLS],
                env,
            )  # fmt: skip
            requests = model.agent_requests()
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
        events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        debug_log = debug_file.read_text() if debug_file.exists() else ""
        return Session(events, requests, done.stderr, debug_log)


def start_block(request: dict[str, Any]) -> str:
    """The SessionStart hook's block as Claude Code put it in front of the model: from the
    preamble to the end of its fenced memory ("" when the request has none)."""
    return memory_block(request_text(request))


def remember_the_rule(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The model's step after the tool search: call memesh's `remember`, which the search
    loaded into the request's tools — or say that it did not."""
    if REMEMBER not in offered_tools(request):
        return [{"type": "text", "text": f"{REMEMBER} was not offered: {offered_tools(request)}"}]
    why = "Releases need the whole team around; holds while the team shares one office"
    arguments = {"name": "deploy-rule", "type": "decision", "observations": [RULE], "why": why}
    return call(REMEMBER, arguments)(request)


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory, claude: Path) -> Iterator[Machine]:
    machine = Machine(tmp_path_factory.mktemp("claude-code"), claude)
    machine.memesh("setup", "claude-code")
    yield machine


def test_claude_code_runs_memesh_s_tools_and_hooks_and_the_next_session_starts_with_them(
    machine: Machine,
) -> None:
    machine.repo.write("README.md", f"# Project\n\n{RULE}.\n")
    first = machine.session(
        f"Remember that {RULE.lower()}, and commit the README.",
        [
            call("ToolSearch", {"query": f"select:{','.join(SEARCHED)}", "max_results": 5}),
            remember_the_rule,
            call("Bash", {"command": f"git commit -q -am '{COMMIT_SUBJECT}'",
                          "description": "Commit the README"}),
            say(LAST_REPLY),
        ],
    )  # fmt: skip

    # The MCP server connected and offered memesh's tools: the search loaded them into the
    # model's tools with the schemas memesh publishes. (Whether the first request already
    # lists them depends on whether the server finished its handshake before the session's
    # first step; the search waits for a server still connecting.)
    opening = first.requests[0]
    assert len(first.requests) >= 3, first.diagnosis()
    loaded = {t["name"]: t for t in first.requests[1].get("tools", [])}
    assert set(SEARCHED) <= set(loaded), first.diagnosis()
    assert "observations" in loaded[REMEMBER]["input_schema"]["properties"]
    assert "query" in loaded["mcp__memesh__recall"]["input_schema"]["properties"]

    # SessionStart's block reached the model, and every hook Claude Code reports succeeded.
    opening_block = start_block(opening)
    assert opening_block.startswith(PREAMBLE_START), request_text(opening)[-3000:]
    assert "```memesh-memory" in opening_block
    assert first.hook_responses()
    for response in first.hook_responses():
        assert response["exit_code"] == 0 and response["outcome"] == "success", response

    # The `remember` call went through and is in memesh.
    results = [b for r in first.requests for m in r["messages"] if isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"]  # fmt: skip
    assert not any(b.get("is_error") for b in results), results
    recalled = json.loads(machine.memesh("recall", "--json", "Tuesdays deploys"))
    by_name = {e["name"]: e for e in recalled["entities"]}
    assert by_name["deploy-rule"]["type"] == "decision"
    assert RULE in by_name["deploy-rule"]["observations"]
    # Claude Code declares `claude-code` in `initialize`.
    assert by_name["deploy-rule"]["metadata"]["provenance"]["source_host"] == "claude-code"

    # The prompt's "remember that …" is a note; the commit through Bash is a commit memory;
    # Stop stored the session's evidence.
    notes = machine.entities("type = 'note'")
    assert any("tuesdays only" in " ".join(observations).lower() for *_, observations in notes)
    commits = machine.entities("type = 'commit'")
    assert any(COMMIT_SUBJECT in " ".join(observations) for *_, observations in commits), commits
    (session,) = machine.entities("name = ?", f"session-{first.session_id}")
    assert session[1] == "session"
    assert "Tool calls: 3 (1 shell commands)" in session[2], session
    ((_, _, handoff),) = machine.entities("type = 'handoff'")
    assert handoff == [LAST_REPLY]  # the tool's name keeps its underscores

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
    assert second.result["subtype"] == "success"

    # Claude Code's own log: each of memesh's hooks it ran exited 0. (How fast `memesh mcp`
    # exits on Claude Code's SIGINT is a matter of time, measured by bench/, not asserted.)
    for run in (first, second):
        ran = HOOK_RUN.findall(run.debug_log)
        assert ran and all(status == "0" for _, status in ran), run.debug_log[-6000:]
    ran_first = {event for event, _ in HOOK_RUN.findall(first.debug_log)}
    assert {"SessionStart:startup", "UserPromptSubmit", "PreToolUse:Bash", "PostToolUse:Bash",
            "Stop"} <= ran_first, ran_first  # fmt: skip
