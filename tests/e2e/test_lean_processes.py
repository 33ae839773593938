"""What a `memesh` process imports when it runs alone (no `memesh serve` to forward to): only
what its command or hook event needs. Hooks and shell habits are made of such processes, and
a module imported at start-up is paid for by every one of them (docs/performance-notes.md).

Each case runs the command in a process of its own (tests/procs/imported_modules.py: the
`memesh` entry point, writing the names in sys.modules as the process exits) and checks
three things: the process did its work (its answer, or no
failure recorded in hook-outcomes.jsonl), it imported the module that does that work (so
the list is the process's own), and none of the modules it has no use for. The time each
process takes is reported by bench/hook_bench.py and bench/peer_cli.py, never asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class

from core.hook_outcomes import OUTCOMES_FILENAME
from graph.project import project_id
from tests.git_repos import GitRepo
from tests.processes import PROCESS_DEADLINE, PROCS, ROOT, memesh, memesh_env

pytestmark = pytest.mark.slow  # every case is a process

FIXTURES = ROOT / "tests" / "fixtures" / "hooks"
# No process that runs alone needs these unless it embeds a query or reads the vector index:
# the embedding runtime, numpy (which the sqlite-vec package's __init__ would import), and
# recall's pipeline. The default embedder (local) is configured in every case.
VECTOR_SIDE = frozenset(
    {
        "numpy",
        "onnxruntime",
        "tokenizers",
        "sqlite_vec",
        "graph.indexing.generations",
        "graph.indexing.embedding_pass",
        "graph.indexing.query_cache",
        "graph.ops.recall.selector",
        "graph.ops.recall.vector_side",
    }
)
# A hook that writes nothing needs neither the write path nor git.
WRITE_PATH = frozenset(
    {
        "graph.capture.capture",
        "graph.capture.commit_capture",
        "graph.ops.remember.service",
        "graph.capture.git_history",
    }
)
# The stemmer (~0.06 s to import) is for indexing and searching text; PreToolUse's file
# context searches the file's path, the other cases search nothing.
STEMMER = frozenset({"snowballstemmer"})
# The system checks import the URL configuration (and through it every view): a CLI command
# or hook runs none (requires_system_checks = []), so it never loads the URLs either.
URLS = frozenset({"memesh_site.urls"})
# A PostToolUse that is no commit, or a prompt that asks nothing of memesh, has nothing to do,
# as its input shows: it is answered before Django is set up (api/hooks/triage.py).
DJANGO = frozenset({"django.db", "django.core.management"})
# `memesh --help` lists the commands by their modules' names: it loads none of them, so it
# needs no operation and no schema.
OPERATIONS = frozenset(
    {"pydantic", "api.cli.base", "graph.ops.kit.operation", "graph.ops.registry"}
)


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    fixture: str | None  # the hook input, from tests/fixtures/hooks
    worker: str  # a module that does this process's work: it must be imported
    absent: frozenset[str]
    answer: str | None  # text the process prints ("" : it prints nothing)
    fields: dict[str, object] = field(default_factory=dict)  # set in the hook input


CASES = {
    "session-start": Case(
        ("hook", "session-start"),
        "session-start.json",
        "graph.ops.briefing",
        VECTOR_SIDE | WRITE_PATH | STEMMER | URLS,
        "the token audience from settings",
    ),
    "pre-tool-use Edit": Case(
        ("hook", "pre-tool-use"),
        "pre-tool-use-edit.json",
        "graph.capture.file_context",
        VECTOR_SIDE | WRITE_PATH | URLS,
        "the token audience from settings",
    ),
    "pre-tool-use Bash": Case(
        ("hook", "pre-tool-use"),
        "pre-tool-use-bash.json",
        "graph.capture.lesson_guards",
        VECTOR_SIDE | WRITE_PATH | STEMMER | URLS,
        "",
    ),
    "post-tool-use Bash, not a commit": Case(
        ("hook", "post-tool-use"),
        "post-tool-use-bash-cat.json",
        "api.hooks.post_tool_use",
        VECTOR_SIDE | WRITE_PATH | STEMMER | URLS | DJANGO,
        "",
    ),
    "user-prompt-submit, no request": Case(
        ("hook", "user-prompt-submit"),
        "user-prompt-submit.json",
        "graph.capture.remember_intent",
        VECTOR_SIDE | WRITE_PATH | STEMMER | URLS | DJANGO,
        "",
        {"prompt": "Fix the failing test in auth.py, then run the suite."},
    ),
    "--help": Case(
        ("--help",), None, "django.core.management", VECTOR_SIDE | STEMMER | OPERATIONS, "hook"
    ),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, Path]:
    """A repository with a file, and a home holding one memory about that file (remembered
    as a user would: the process also migrates the fresh home)."""
    root = tmp_path_factory.mktemp("lean")
    repo = GitRepo(root / "widget")
    repo.write("src/auth.py", "AUDIENCE = None\n")
    repo.commit("Start the widget")
    home = root / "home"
    done = subprocess.run(
        memesh("remember", "--name", "auth-audience", "--type", "decision", "--obs",
               "auth.py reads the token audience from settings", "--why", "one source of truth",
               "--tag", "file:auth.py", "--project", project_id(repo.root)),
        cwd=repo.root, env=run_env(home, root), capture_output=True, text=True,
        timeout=PROCESS_DEADLINE, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return repo, home


def failed_outcomes(home: Path) -> list[dict[str, object]]:
    path = home / OUTCOMES_FILENAME
    lines = path.read_text().splitlines() if path.exists() else []
    return [o for o in map(json.loads, lines) if o.get("outcome") == "failed"]


def run_env(home: Path, root: Path) -> dict[str, str]:
    env = memesh_env(home, MEMESH_CLI_LOCAL="1", HOME=str(root / "user"))
    env.pop("MEMESH_EMBEDDER", None)  # the default (local) embedder stays configured
    return env


@pytest.mark.parametrize("name", list(CASES))
def test_a_process_alone_imports_only_what_its_command_needs(
    name: str, project: tuple[GitRepo, Path], tmp_path: Path
) -> None:
    case, (repo, home) = CASES[name], project
    stdin = ""
    if case.fixture is not None:
        stdin = (FIXTURES / case.fixture).read_text().replace("__CWD__", str(repo.root))
        stdin = stdin.replace("__SESSION__", f"lean-{tmp_path.name}")
        stdin = stdin.replace("__TRANSCRIPT__", str(tmp_path / "none.jsonl"))
        stdin = json.dumps({**json.loads(stdin), **case.fields})
    modules = tmp_path / "modules.txt"
    done = subprocess.run(
        [sys.executable, str(PROCS / "imported_modules.py"), str(modules), *case.args],
        cwd=repo.root, env=run_env(home, home.parent), input=stdin, capture_output=True,
        text=True, timeout=PROCESS_DEADLINE, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    if case.answer:
        assert case.answer in done.stdout
    else:
        assert done.stdout == ""
    assert failed_outcomes(home) == []
    imported = set(modules.read_text().split())
    assert case.worker in imported
    assert sorted(imported & case.absent) == []


def test_every_memesh_command_but_serve_runs_without_system_checks() -> None:
    """`memesh serve` checks the installation as it starts, and `memesh doctor` reports it;
    the other commands (hooks among them) must not pay for the checks on every call."""
    apps = get_commands()
    ours = sorted(name for name, app in apps.items() if app.split(".")[0] == "api")
    checked = {
        name: load_command_class(apps[name], name).requires_system_checks
        for name in ours
        if load_command_class(apps[name], name).requires_system_checks
    }

    assert "hook" in ours and "remember" in ours
    assert checked == {"serve": "__all__"}
