"""memesh inside the real Gemini CLI (npm `@google/gemini-cli`, pinned), installed from its
registry, set up by `memesh setup gemini`, and driven by a scripted model on loopback
(tests/fakes/scripted_gemini.py, the Gemini API) through two non-interactive sessions in a real
git repository.

The user's own settings.json holds what Gemini CLI's first run would have saved there: an API
key as the way to sign in (the key itself, and the model's address, come from the environment:
GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL) and no usage statistics; the project is a folder the
user trusted (~/.gemini/trustedFolders.json). The first session is told "remember that …"; its
model calls memesh's `briefing` and `remember` (Gemini CLI offers MCP tools at once, as
`mcp_<server>_<tool>`) and commits through `run_shell_command`. The second starts in the same
project. What Gemini CLI sent the model is read from the requests the model server received;
what memesh stored, from `memesh recall --json` and the database.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.scripted_gemini import (
    ScriptedGemini,
    Step,
    call,
    declarations,
    function_responses,
    request_text,
    say,
)
from tests.host_machine import PREAMBLE_START, ProjectMachine, memory_block
from tests.hosts import npm_host_command

pytestmark = pytest.mark.slow

PACKAGE, VERSION = "@google/gemini-cli", "0.61.0"
REMEMBER, RECALL, BRIEFING = "mcp_memesh_remember", "mcp_memesh_recall", "mcp_memesh_briefing"
RULE = "Deploys go out on Tuesdays only"
# The session's last reply, long enough for AfterAgent (memesh's Stop) to keep as the handoff.
LAST_REPLY = (
    f"Recorded the deploy rule with {REMEMBER} and committed the README. Next: tell the "
    "release team that deploys go out on Tuesdays only, and move Friday's release to Tuesday."
)
COMMIT_SUBJECT = "Document the Tuesday deploy rule"
# What Gemini CLI's first run saves once the user picks "Use Gemini API key" (and turns usage
# statistics off, so the session sends nothing but the model's requests).
USERS_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
}


@pytest.fixture(scope="session")
def gemini() -> Path:
    """The pinned Gemini CLI's `gemini`, installed once (tests/hosts.py)."""
    return npm_host_command(PACKAGE, VERSION, "gemini")


@dataclass
class Session:
    """One `gemini -p` run: its stream-json events and the model requests it made."""

    events: list[dict[str, Any]]
    requests: list[dict[str, Any]]
    stderr: str

    @property
    def session_id(self) -> str:
        (init,) = [e for e in self.events if e.get("type") == "init"]
        return str(init["session_id"])

    @property
    def result(self) -> dict[str, Any]:
        return next(e for e in self.events if e.get("type") == "result")

    def diagnosis(self) -> str:
        """What a failed assertion shows: the session's events and Gemini CLI's stderr."""
        return json.dumps(self.events, indent=1)[:6000] + self.stderr[-3000:]


class Machine(ProjectMachine):
    """A user's machine: a HOME with Gemini CLI signed in by API key and memesh set up in it,
    a MEMESH_HOME, a trusted project."""

    def __init__(self, root: Path, gemini: Path) -> None:
        # The machine's own Gemini CLI settings and credentials stay out of the test.
        super().__init__(root, ("GEMINI_", "GOOGLE_"))
        self.gemini = gemini
        settings_dir = self.user_home / ".gemini"
        settings_dir.mkdir(parents=True)
        (settings_dir / "settings.json").write_text(json.dumps(USERS_SETTINGS, indent=2))
        trusted = {str(self.repo.root): "TRUST_FOLDER"}
        (settings_dir / "trustedFolders.json").write_text(json.dumps(trusted))

    def session(self, prompt: str, script: list[Step]) -> Session:
        with ScriptedGemini(script) as model:
            env = {**self.env, "GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": model.url}
            # `--approval-mode yolo`: `-p` cannot ask before a tool runs, so the user grants
            # every call upfront (memesh's tools and the shell's git commit among them).
            done = self.run(
                [str(self.gemini), "-p", prompt, "--output-format", "stream-json",
                 "--approval-mode", "yolo"],
                env,
            )  # fmt: skip
            requests = model.agent_requests()
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        return Session(events, requests, done.stderr)

    def hook_failures(self) -> list[dict[str, Any]]:
        """The hook runs memesh recorded as failed (MEMESH_HOME/hook-outcomes.jsonl)."""
        log = self.memesh_home / "hook-outcomes.jsonl"
        lines = log.read_text().splitlines() if log.exists() else []
        return [o for o in map(json.loads, lines) if o.get("outcome") == "failed"]


def start_block(request: dict[str, Any]) -> str:
    """The SessionStart hook's block as Gemini CLI put it in front of the model: from the
    preamble to the end of its fenced memory ("" when the request has none)."""
    return memory_block(request_text(request))


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory, gemini: Path) -> Iterator[Machine]:
    machine = Machine(tmp_path_factory.mktemp("gemini-cli"), gemini)
    machine.memesh("setup", "gemini")
    yield machine


def test_gemini_cli_runs_memesh_s_tools_and_hooks_and_the_next_session_starts_with_them(
    machine: Machine,
) -> None:
    machine.repo.write("README.md", f"# Project\n\n{RULE}.\n")
    why = "Releases need the whole team around; holds while the team shares one office"
    first = machine.session(
        f"Remember that {RULE.lower()}, and commit the README.",
        [
            call(BRIEFING, {}),
            call(REMEMBER, {"name": "deploy-rule", "type": "decision", "observations": [RULE],
                            "why": why}),
            call("run_shell_command", {"command": f"git commit -q -am '{COMMIT_SUBJECT}'"}),
            say(LAST_REPLY),
        ],
    )  # fmt: skip

    # The MCP server connected before the first step and offered memesh's tools, with the
    # schemas memesh publishes.
    assert len(first.requests) == 4, first.diagnosis()
    offered = declarations(first.requests[0])
    assert {REMEMBER, RECALL, BRIEFING} <= set(offered), first.diagnosis()
    schema = offered[REMEMBER].get("parametersJsonSchema") or offered[REMEMBER]["parameters"]
    assert "observations" in schema["properties"]

    # SessionStart's block reached the model, in front of the user's prompt.
    opening_block = start_block(first.requests[0])
    assert opening_block.startswith(PREAMBLE_START), request_text(first.requests[0])[-3000:]
    assert "```memesh-memory" in opening_block

    # Every tool call went through: briefing, remember, the commit.
    results = function_responses(first.requests[-1])
    assert [r["name"] for r in results] == [BRIEFING, REMEMBER, "run_shell_command"], results
    assert not any("error" in r["response"] for r in results), results
    recalled = json.loads(machine.memesh("recall", "--json", "Tuesdays deploys"))
    by_name = {e["name"]: e for e in recalled["entities"]}
    assert by_name["deploy-rule"]["type"] == "decision"
    assert RULE in by_name["deploy-rule"]["observations"]
    # Gemini CLI declares `gemini-cli-mcp-client`: stamped with the host's name.
    assert by_name["deploy-rule"]["metadata"]["provenance"]["source_host"] == "gemini-cli"

    # The prompt's "remember that …" (BeforeAgent) is a note, and the note is the user's
    # words, not memesh's own block that Gemini CLI put in front of them; the commit through
    # the shell (AfterTool) is a commit memory; AfterAgent stored the session's evidence.
    notes = machine.entities("type = 'note'")
    assert [observations for *_, observations in notes] == [
        [f"{RULE.lower()}, and commit the README."]
    ], notes
    commits = machine.entities("type = 'commit'")
    assert any(COMMIT_SUBJECT in " ".join(observations) for *_, observations in commits), commits
    (session,) = machine.entities("name = ?", f"session-{first.session_id}")
    assert session[1] == "session"
    assert "Tool calls: 3 (1 shell commands)" in session[2], session
    ((_, _, handoff),) = machine.entities("type = 'handoff'")
    assert handoff == [LAST_REPLY]
    assert first.result["status"] == "success"

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
    assert second.result["status"] == "success"
    assert machine.hook_failures() == []
