"""memesh inside the real OpenClaw (npm `openclaw`, pinned), installed from its registry, with
memesh's memory plugin (integrations/openclaw, built) installed by OpenClaw's own command
(`openclaw plugins install --link`), and driven through two embedded agent turns (`openclaw
agent --local --json`) by a scripted model on loopback speaking OpenAI Chat Completions
(tests/fakes/scripted_chat.py), configured as a custom provider the way OpenClaw's docs show
for a local OpenAI-compatible server.

This OpenClaw release refuses Node older than 24.16 (its preinstall script and its engines),
and Debian's Node is 20: the test runs it on Node 24 from the npm package carrying Node's own
binary (tests/hosts.py `node_runtime`).

The plugin reaches the user's running `memesh serve` over loopback HTTP, found through
MEMESH_HOME's serve record. OpenClaw offers plugin tools behind its tool search, so the
scripted model searches, then calls memesh's `memory_store` through `tool_call`; the second
turn, in a new session, starts with what the first stored (the plugin's auto-recall) and
calls `memory_search`. What OpenClaw sent the model is read from the requests the model server
received; what memesh stored, from `memesh recall --json`.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_openclaw_plugin import built
from tests.fakes.scripted_chat import ScriptedChat, chat_text, offered_functions, tool_results
from tests.fakes.scripted_model import Step, call, say
from tests.host_machine import PREAMBLE_START, HostMachine
from tests.hosts import node_runtime, npm_host
from tests.processes import serving

pytestmark = pytest.mark.slow

PACKAGE, VERSION = "openclaw", "2026.9.6"
NODE_VERSION = "24.22.3"  # within the release's engines: >=24.16.0 <25
PROMPT_SECTION = "memesh holds memory shared with the user's other coding agents."
RULE = "Deploys go out on Tuesdays only"
WHY = "Releases need the whole team around"
MODEL = "scripted-chat"

__all__ = ["built"]  # the plugin built with its pinned toolchain (the plugin's own tests)


@dataclass(frozen=True)
class OpenClaw:
    command: Path
    node_bin: Path


@pytest.fixture(scope="session")
def openclaw() -> OpenClaw:
    """The pinned OpenClaw's `openclaw` and the Node it runs on, installed once."""
    node_bin = node_runtime(NODE_VERSION)
    command = npm_host(PACKAGE, VERSION, node_bin=node_bin) / "node_modules" / ".bin" / PACKAGE
    assert command.exists(), f"{PACKAGE}@{VERSION} installed no `{PACKAGE}`"
    return OpenClaw(command, node_bin)


@dataclass
class Turn:
    """One `openclaw agent --local --json` run: its result and the model requests it made."""

    result: dict[str, Any]
    requests: list[dict[str, Any]]
    stderr: str

    @property
    def meta(self) -> dict[str, Any]:
        return dict(self.result["meta"])

    def diagnosis(self) -> str:
        last = self.requests[-1]["messages"][1:] if self.requests else []
        return json.dumps(last, indent=1)[:6000] + self.stderr[-4000:]


class Machine(HostMachine):
    """A user's machine: a HOME whose OpenClaw uses the scripted model, a MEMESH_HOME with
    `memesh serve` running."""

    def __init__(self, root: Path, openclaw: OpenClaw) -> None:
        # The machine's own OpenClaw and provider settings stay out of the test.
        super().__init__(root, ("OPENCLAW_", "OPENAI_", "ANTHROPIC_"))
        self.openclaw = openclaw
        self.config = self.user_home / ".openclaw" / "openclaw.json"
        self.env["PATH"] = f"{openclaw.node_bin}{os.pathsep}{self.env.get('PATH', '')}"

    def run_openclaw(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run([str(self.openclaw.command), *args])

    def install_plugin(self, plugin: Path) -> str:
        """OpenClaw's own install of a local plugin. Run without a terminal, OpenClaw asks
        for the confirmations a user gives at its prompts as flags: a source outside its
        review (`--force`) and the plugin's declared capabilities (`--accept-capabilities`)."""
        done = self.run_openclaw("plugins", "install", "--link", "--force", "--accept-capabilities",
                        str(plugin))  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    def allow_auto_recall(self) -> None:
        """OpenClaw runs a plugin's prompt hook only once the user lets that plugin see the
        conversation; without this the plugin's tools work and no memory comes before a
        prompt (OpenClaw drops the hook at registration, saying so only in its plugin
        diagnostics)."""
        entry = "plugins.entries.memesh.hooks.allowConversationAccess"
        done = self.run_openclaw("config", "set", entry, "true")
        assert done.returncode == 0, done.stdout + done.stderr

    def use_model(self, base_url: str) -> None:
        """The user's model: an OpenAI-compatible server as a custom provider (OpenClaw's
        docs/gateway/local-models.md), merged into the config the install wrote."""
        config = json.loads(self.config.read_text())
        model = {"id": MODEL, "name": "Scripted", "reasoning": False, "input": ["text"],
                 "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                 "contextWindow": 200000, "maxTokens": 8192}  # fmt: skip
        provider = {"baseUrl": base_url, "apiKey": "dummy", "api": "openai-completions",
                    "models": [model]}  # fmt: skip
        config["models"] = {"mode": "merge", "providers": {"scripted": provider}}
        config.setdefault("agents", {})["defaults"] = {"model": {"primary": f"scripted/{MODEL}"}}
        self.config.write_text(json.dumps(config, indent=2))


@dataclass
class Host:
    machine: Machine
    model: ScriptedChat
    install_output: str

    def turn(self, session_id: str, message: str, script: list[Step]) -> Turn:
        """One embedded agent turn in session `session_id`, its model steps from `script`."""
        self.model.script, self.model.steps_taken = list(script), 0
        already = len(self.model.agent_requests())
        done = self.machine.run_openclaw("agent", "--local", "--json", "--session-id", session_id,
                                "--message", message)  # fmt: skip
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
        requests = self.model.agent_requests()[already:]
        return Turn(json.loads(done.stdout), requests, done.stderr)


@pytest.fixture(scope="module")
def host(
    tmp_path_factory: pytest.TempPathFactory, openclaw: OpenClaw, built: Path
) -> Iterator[Host]:
    root = tmp_path_factory.mktemp("openclaw")
    machine = Machine(root, openclaw)
    installed = machine.install_plugin(built.parent)
    machine.allow_auto_recall()
    with ScriptedChat([]) as model:
        machine.use_model(f"{model.url}/v1")
        # `memesh serve` as the user runs it; the plugin finds it through serve.json.
        with serving(
            machine.memesh_home, root / "serve.log", "--no-worker", MEMESH_EMBEDDER="none"
        ):
            yield Host(machine, model, installed)


def last_tool_result(request: dict[str, Any]) -> str:
    """What OpenClaw sent back for the model's latest tool call."""
    return list(tool_results(request).values())[-1]


def store_the_rule(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The model's step after the tool search: call memesh's `memory_store` through
    `tool_call` — or say that the search did not find it."""
    found = "\n".join(tool_results(request).values())
    if "memory_store" not in found:
        return [{"type": "text", "text": f"memory_store was not found: {found[:2000]}"}]
    arguments = {"name": "deploy-rule", "type": "decision", "observations": [RULE], "why": WHY}
    return call("tool_call", {"id": "memory_store", "args": arguments})(request)


def test_openclaw_loads_memesh_s_plugin_and_the_next_session_starts_with_what_it_stored(
    host: Host,
) -> None:
    machine = host.machine
    # OpenClaw's install linked the plugin, enabled it and gave it the memory slot.
    config = json.loads(machine.config.read_text())
    assert config["plugins"]["slots"]["memory"] == "memesh", config["plugins"]
    assert config["plugins"]["entries"]["memesh"]["enabled"] is True

    first = host.turn(
        "memesh-first",
        f"Remember that {RULE.lower()}.",
        [
            call("tool_search", {"query": "store a memory"}),
            store_the_rule,
            say("Stored the deploy rule."),
        ],
    )
    assert len(first.requests) >= 3, first.diagnosis()
    # The plugin registered (its log line names the memesh it found) and its prompt section
    # is in the system prompt; nothing was stored yet, so auto-recall put nothing in front.
    assert "memesh: memory plugin registered" in first.stderr, first.stderr[-4000:]
    # The plugin read the user's consent from OpenClaw's config (it warns without it).
    assert "memesh: auto-recall is off" not in first.stderr, first.stderr[-4000:]
    opening = first.requests[0]
    assert "tool_call" in offered_functions(opening), offered_functions(opening)
    assert PROMPT_SECTION in chat_text(opening)
    assert PREAMBLE_START not in chat_text(opening)

    # The call went through OpenClaw to the plugin and on to memesh.
    stored = last_tool_result(first.requests[2])
    # OpenClaw wraps the plugin's result ({"tool": …, "result": …}); the plugin's text is in it.
    assert "Stored: deploy-rule" in stored, first.diagnosis()
    summary = first.meta["toolSummary"]
    assert summary["failures"] == 0, summary
    assert first.meta["finalAssistantVisibleText"] == "Stored the deploy rule."
    recalled = json.loads(machine.memesh("recall", "--json", "Tuesdays deploys"))
    by_name = {e["name"]: e for e in recalled["entities"]}
    assert by_name["deploy-rule"]["type"] == "decision"
    assert RULE in by_name["deploy-rule"]["observations"]
    # Over memesh serve's REST API: the HTTP API's stamp.
    assert by_name["deploy-rule"]["metadata"]["provenance"]["source_host"] == "http"

    # A new session: the plugin's auto-recall put the memory in front of the prompt, fenced
    # as background data, and `memory_search` finds it.
    second = host.turn(
        "memesh-second",
        "What is the deploy rule?",
        [
            call("tool_call", {"id": "memory_search", "args": {"query": "deploy rule"}}),
            say("Tuesdays only."),
        ],
    )
    assert len(second.requests) >= 2, second.diagnosis()
    text = chat_text(second.requests[0])
    assert PREAMBLE_START in text, text[-4000:]
    assert f"[decision] deploy-rule: {RULE}" in text
    found = last_tool_result(second.requests[1])
    assert RULE in found, second.diagnosis()
    assert second.meta["toolSummary"]["failures"] == 0, second.meta["toolSummary"]
    assert second.meta["finalAssistantVisibleText"] == "Tuesdays only."
