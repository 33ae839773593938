"""The hooks and messages between agents (api/hooks/inbox.py): `memesh hook <event>` as
Claude Code runs it, fed the hook input it sends (tests/fixtures/hooks/*.json), for a session
that declared who it is with MEMESH_RECIPIENT. The messages are sent through `memesh
message`, as another agent would.

A session's MEMESH_RECIPIENT is part of its MEMESH_* environment, so its hooks run in their
own process unless `memesh serve` was started with the same one (api/cli/forward.py);
these run in process.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core.hook_outcomes import OUTCOMES_FILENAME
from graph.project import project_id
from tests.git_repos import GitRepo
from tests.processes import PROCESS_DEADLINE, ROOT, memesh, memesh_env

pytestmark = pytest.mark.slow  # every hook and command is a process

FIXTURES = ROOT / "tests" / "fixtures" / "hooks"


class Agents:
    """One home, one project repository, and the processes of a test."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.user_home = tmp_path / "user"
        self.user_home.mkdir()
        self.repo = GitRepo(tmp_path / "widget")
        self.repo.write("README.md", "widget\n")
        self.repo.commit("Start")
        self.project = project_id(self.repo.root)

    def env(self, **extra: str) -> dict[str, str]:
        return memesh_env(
            self.home, MEMESH_EMBEDDER="none", MEMESH_CLI_LOCAL="1", HOME=str(self.user_home),
            **extra,
        )  # fmt: skip

    def message(self, *args: str, **env: str) -> dict[str, Any]:
        done = subprocess.run(
            memesh("message", *args, "--json"), cwd=self.repo.root, env=self.env(**env),
            capture_output=True, text=True, timeout=PROCESS_DEADLINE, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    def send(self, recipient: str = "bob", project: str | None = None, **flags: str) -> str:
        args = ["send", "--recipient", recipient, "--payload", json.dumps({"ask": "review"})]
        args += ["--project", project or self.project]
        for flag, value in flags.items():
            args += [f"--{flag.replace('_', '-')}", value]
        return str(self.message(*args, MEMESH_RECIPIENT="alice")["message_id"])

    def hook(self, event: str, fixture: str, session: str, recipient: str | None) -> Any:
        text = (FIXTURES / fixture).read_text().replace("__CWD__", str(self.repo.root))
        text = text.replace("__SESSION__", session)
        text = text.replace("__TRANSCRIPT__", str(self.user_home / f"{session}.jsonl"))
        extra = {"MEMESH_RECIPIENT": recipient} if recipient is not None else {}
        return subprocess.run(
            memesh("hook", event), cwd=self.repo.root, env=self.env(**extra), input=text,
            capture_output=True, text=True, timeout=PROCESS_DEADLINE, check=False,
        )  # fmt: skip

    def session_start(self, session: str, recipient: str | None) -> tuple[str, str]:
        done = self.hook("session-start", "session-start.json", session, recipient)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        answer = json.loads(done.stdout)
        return answer["hookSpecificOutput"]["additionalContext"], done.stderr

    def stop(self, session: str, recipient: str = "bob") -> dict[str, Any]:
        done = self.hook("stop", "stop.json", session, recipient)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        return dict(json.loads(done.stdout)) if done.stdout else {}

    def outcomes(self) -> list[dict[str, Any]]:
        path = self.home / OUTCOMES_FILENAME
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def agents(tmp_path: Path) -> Agents:
    return Agents(tmp_path)


def test_session_start_shows_what_waits_for_the_declared_recipient_per_project(
    agents: Agents,
) -> None:
    agents.message("register", "--project", agents.project, "--recipient", "bob", "--session", "b")
    agents.message("register", "--project", "other/app", "--recipient", "bob", "--session", "b")
    agents.send()
    agents.send()
    agents.send(project="other/app")

    text, _ = agents.session_start("s1", "bob")
    assert f"2 message(s) from other agents wait for bob in project {agents.project}" in text
    assert "1 message(s) from other agents wait for bob in project other/app" in text
    assert "untrusted data" in text
    # A session with no recipient identity is told nothing of anyone's mail.
    quiet, _ = agents.session_start("s2", None)
    assert "message(s)" not in quiet and "MEMESH_RECIPIENT" not in quiet


@pytest.mark.parametrize("declared", ["/home/me/agents/bob", "x" * 201, "~bob"])
def test_an_invalid_recipient_id_is_refused_on_stderr_in_the_outcomes_and_in_the_context(
    agents: Agents, declared: str
) -> None:
    text, stderr = agents.session_start("s1", declared)

    refusal = stderr.strip()
    assert refusal.startswith("MeMesh: MEMESH_RECIPIENT refused") and "refused" in refusal
    assert refusal in text
    refused = [o for o in agents.outcomes() if o["outcome"] == "refused"]
    assert [(o["event"], o["what"]) for o in refused] == [("session-start", "recipient")]


def test_an_invalid_recipient_id_is_refused_even_when_the_database_cannot_be_opened(
    agents: Agents, tmp_path: Path
) -> None:
    not_a_directory = tmp_path / "a-file"
    not_a_directory.write_text("")
    unopenable = str(not_a_directory / "knowledge-graph.db")
    done = subprocess.run(
        memesh("hook", "session-start"), cwd=agents.repo.root, input="{}",
        env={**agents.env(MEMESH_RECIPIENT="../bob"), "MEMESH_DB_PATH": unopenable},
        capture_output=True, text=True, timeout=PROCESS_DEADLINE, check=False,
    )  # fmt: skip
    assert done.returncode == 0
    refusal = done.stderr.strip().splitlines()[-1]
    assert refusal.startswith("MeMesh: MEMESH_RECIPIENT refused")
    assert json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"] == refusal
    outcomes = [(o["event"], o["outcome"]) for o in agents.outcomes()]
    assert ("session-start", "failed") in outcomes and ("session-start", "refused") in outcomes


def test_an_id_never_seen_anywhere_gets_a_typo_hint_and_a_seen_one_does_not(
    agents: Agents,
) -> None:
    agents.message("register", "--project", agents.project, "--recipient", "bob", "--session", "b")

    typo, _ = agents.session_start("s1", "bobb")
    assert "hint: no agent named bobb has been seen in any project yet" in typo
    assert "typo" in typo
    seen, _ = agents.session_start("s2", "bob")  # known, nothing waiting: nothing to say
    assert "bob" not in seen


def test_the_stop_hook_blocks_once_per_message_id_without_intake(agents: Agents) -> None:
    agents.message("register", "--project", agents.project, "--recipient", "bob", "--session", "b")
    first = agents.send()

    blocked = agents.stop("s1")
    assert blocked["decision"] == "block"
    assert first in blocked["reason"] and "intake" in blocked["reason"]
    assert agents.stop("s1").get("decision") is None  # once per id and session

    second = agents.send()
    again = agents.stop("s1")
    assert again["decision"] == "block"
    assert second in again["reason"] and first not in again["reason"]
    assert agents.stop("s2")["decision"] == "block"  # another session: its own once

    for message_id in (first, second):
        agents.message(
            "intake", "--project", agents.project, "--message-id", message_id,
            MEMESH_RECIPIENT="bob",
        )  # fmt: skip
    assert agents.stop("s3").get("decision") is None  # taken in: nothing to block for


def test_fetching_alone_does_not_end_the_block(agents: Agents) -> None:
    agents.message("register", "--project", agents.project, "--recipient", "bob", "--session", "b")
    message_id = agents.send()
    agents.message(
        "fetch", "--project", agents.project, "--message-id", message_id, MEMESH_RECIPIENT="bob"
    )
    assert agents.stop("s1")["decision"] == "block"


def test_a_message_for_another_session_neither_blocks_nor_counts_for_this_one(
    agents: Agents,
) -> None:
    for session in ("s-mine", "s-theirs"):
        agents.message(
            "register", "--project", agents.project, "--recipient", "bob", "--session", session
        )
    message_id = agents.send(intended_session="s-theirs")

    assert agents.stop("s-mine").get("decision") is None
    text, _ = agents.session_start("s-mine", "bob")
    assert "wait for bob" not in text
    theirs = agents.stop("s-theirs")
    assert theirs["decision"] == "block" and message_id in theirs["reason"]


def test_a_prompt_is_told_of_a_newly_waiting_message_once(agents: Agents) -> None:
    agents.message("register", "--project", agents.project, "--recipient", "bob", "--session", "b")
    message_id = agents.send()

    def prompt() -> str:
        done = agents.hook("user-prompt-submit", "user-prompt-submit.json", "s1", "bob")
        assert done.returncode == 0, done.stderr
        return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])

    first = prompt()
    assert message_id in first and "new message(s) wait for bob" in first
    assert "MeMesh stored what the user asked to remember" in first  # the prompt's own answer
    assert message_id not in prompt()
