"""memesh inside the real Hermes Agent (PyPI `hermes-agent`, pinned), installed from its
registry into a virtual environment of its own, with memesh's memory provider installed as
docs/platforms/hermes-agent.md tells a user (the plugin copied to `$HERMES_HOME/plugins/memesh`,
`hermes config set memory.provider memesh`), and driven through two one-shot sessions
(`hermes -z`) by a scripted model on loopback speaking OpenAI Chat Completions
(tests/fakes/scripted_chat.py), the endpoint the user's config.yaml names.

Hermes runs without memesh installed beside it, so the provider reaches the user's running
`memesh serve` over loopback HTTP (found through MEMESH_HOME's serve record). The first session
is told "remember that …"; its model calls memesh's `memesh_remember`. The second starts with
what the first stored in front of the user's message, and calls `memesh_recall`. What Hermes
sent the model is read from the requests the model server received; what memesh stored, from
`memesh recall --json`.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.scripted_chat import ScriptedChat, chat_text, offered_functions, tool_results
from tests.fakes.scripted_model import Step, call, say
from tests.host_machine import PREAMBLE_START, ProjectMachine, memory_block
from tests.hosts import pypi_host
from tests.processes import ROOT, serving

pytestmark = pytest.mark.slow

PACKAGE, VERSION = "hermes-agent", "0.19.0"
PLUGIN = ROOT / "integrations" / "hermes" / "memesh"
SYSTEM_BLOCK_START = "You have memesh, a persistent memory shared with the user's other"
RULE = "Deploys go out on Tuesdays only"
WHY = "Releases need the whole team around"


@pytest.fixture(scope="session")
def hermes() -> Path:
    """The pinned Hermes Agent's `hermes`, installed once (tests/hosts.py)."""
    command = pypi_host(PACKAGE, VERSION) / "hermes"
    assert command.exists(), f"{PACKAGE}=={VERSION} installed no `hermes`"
    return command


@dataclass
class Session:
    """One `hermes -z` run: its reply and the model requests it made."""

    reply: str
    requests: list[dict[str, Any]]
    stderr: str

    def diagnosis(self) -> str:
        """What a failed assertion shows: the messages of the model's last step and stderr."""
        last = self.requests[-1]["messages"][1:] if self.requests else []
        return json.dumps(last, indent=1)[:6000] + self.stderr[-3000:]


class Machine(ProjectMachine):
    """A user's machine: a HOME whose Hermes points at the scripted model's endpoint and uses
    memesh as its memory provider, a MEMESH_HOME with `memesh serve` running, a project."""

    def __init__(self, root: Path, hermes: Path, model_url: str) -> None:
        # The machine's own Hermes and provider settings stay out of the test.
        super().__init__(root, ("HERMES_", "OPENAI_", "ANTHROPIC_", "OPENROUTER_"))
        self.hermes = hermes
        self.hermes_home = self.user_home / ".hermes"
        self.hermes_home.mkdir(parents=True)
        # The model the user already chose: an OpenAI-compatible endpoint (Hermes's
        # "custom" provider). memesh's own lines are added below by Hermes's command.
        (self.hermes_home / "config.yaml").write_text(
            "model:\n"
            "  provider: custom\n"
            f"  base_url: {model_url}/v1\n"
            "  default: scripted-chat\n"
            "  api_key: dummy\n"
        )

    def install_memesh(self) -> None:
        """docs/platforms/hermes-agent.md's install: copy the plugin, select it. (A Hermes
        that has not run yet has no plugins folder.)"""
        plugins = self.hermes_home / "plugins"
        plugins.mkdir(exist_ok=True)
        shutil.copytree(PLUGIN, plugins / "memesh", ignore=shutil.ignore_patterns("__pycache__"))
        done = self.run([str(self.hermes), "config", "set", "memory.provider", "memesh"])
        assert done.returncode == 0, done.stdout + done.stderr


@dataclass
class Host:
    machine: Machine
    model: ScriptedChat

    def session(self, prompt: str, script: list[Step]) -> Session:
        """`hermes -z prompt`, its model steps taken from `script`."""
        self.model.script, self.model.steps_taken = list(script), 0
        already = len(self.model.agent_requests())
        done = self.machine.run([str(self.machine.hermes), "-z", prompt])
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
        return Session(done.stdout.strip(), self.model.agent_requests()[already:], done.stderr)


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory, hermes: Path) -> Iterator[Host]:
    root = tmp_path_factory.mktemp("hermes")
    with ScriptedChat([]) as model:
        machine = Machine(root, hermes, model.url)
        machine.install_memesh()
        # `memesh serve` as the user runs it; the plugin finds it through serve.json.
        with serving(
            machine.memesh_home, root / "serve.log", "--no-worker", MEMESH_EMBEDDER="none"
        ):
            yield Host(machine, model)


def user_message(request: dict[str, Any]) -> str:
    """The last user message of a chat request: where Hermes puts the provider's prefetch."""
    users = [m for m in request["messages"] if m.get("role") == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, str) else chat_text({"messages": [users[-1]]})


def test_hermes_loads_memesh_s_provider_and_the_next_session_starts_with_what_it_stored(
    host: Host,
) -> None:
    machine = host.machine
    first = host.session(
        f"Remember that {RULE.lower()}.",
        [
            call("memesh_remember", {"name": "deploy-rule", "type": "decision",
                                     "observations": [RULE], "why": WHY}),
            say("Stored the deploy rule."),
        ],
    )  # fmt: skip

    # Hermes loaded the provider itself: its tools are offered with memesh's schemas and its
    # paragraph is in the system prompt. Nothing was stored yet, so no memory came before the
    # user's message.
    assert len(first.requests) >= 2, first.diagnosis()
    opening = first.requests[0]
    tools = {t["function"]["name"]: t["function"] for t in opening["tools"]}
    assert {"memesh_remember", "memesh_recall"} <= set(tools), offered_functions(opening)
    assert "observations" in tools["memesh_remember"]["parameters"]["properties"]
    assert "query" in tools["memesh_recall"]["parameters"]["properties"]
    system = opening["messages"][0]
    assert system["role"] == "system" and SYSTEM_BLOCK_START in system["content"]
    assert memory_block(user_message(opening)) == ""

    # The tool call went through the provider to memesh, and Hermes gave the model its answer.
    (result,) = tool_results(first.requests[1]).values()
    stored = json.loads(result)
    assert stored["success"] is True and stored["data"]["name"] == "deploy-rule", result
    assert first.reply == "Stored the deploy rule."
    recalled = json.loads(machine.memesh("recall", "--json", "Tuesdays deploys"))
    by_name = {e["name"]: e for e in recalled["entities"]}
    assert by_name["deploy-rule"]["type"] == "decision"
    assert RULE in by_name["deploy-rule"]["observations"]
    # Over memesh serve's REST API: the HTTP API's stamp.
    assert by_name["deploy-rule"]["metadata"]["provenance"]["source_host"] == "http"
    # After the turn Hermes handed it to the provider, which kept the user's
    # "remember that …" as a note, as Claude Code's prompt hook does.
    notes = [e for e in recalled["entities"] if "source:user-prompt" in e["tags"]]
    assert [n["observations"] for n in notes] == [[f"{RULE.lower()}."]], recalled
    assert notes[0]["metadata"]["provenance"]["source_host"] == "hermes-agent-hooks"

    # The next session: the provider's prefetch put what the first stored in front of the
    # user's message, fenced as background data, and `memesh_recall` finds it too.
    second = host.session(
        "What is the deploy rule?",
        [call("memesh_recall", {"query": "deploy rule"}), say("Tuesdays only.")],
    )
    block = memory_block(user_message(second.requests[0]))
    assert block.startswith(PREAMBLE_START), user_message(second.requests[0])
    assert f"[decision] deploy-rule: {RULE}" in block
    assert f"[mem:{by_name['deploy-rule']['id']}]" in block
    (answer,) = tool_results(second.requests[1]).values()
    recall = json.loads(answer)
    assert recall["success"] is True, answer
    assert RULE in recall["data"]["memories"]
    assert second.reply == "Tuesdays only."
    # Hermes's own log of the two sessions names no failure of the provider.
    errors = machine.hermes_home / "logs" / "errors.log"
    logged = errors.read_text() if errors.exists() else ""
    assert "memesh" not in logged.lower(), logged[-3000:]
