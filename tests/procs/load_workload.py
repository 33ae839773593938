"""What the multi-process load clients ask for, and what they were promised (no Django here).

Every client (an MCP session, an HTTP client, the CLI loop) draws its next call from an
`Actor`: remember a new entity, append to one of its own or to a name every client shares,
forget one of its own (the whole entity, or one observation), recall one of its own by a token
no other text carries, import a small bundle, or send a call that must be refused. When the
server acknowledges a call, the actor records its promise in the shared `Journal`; afterwards
tests/procs/load_verify.py checks every promise against the database.

Names are partitioned so each promise has one writer: an actor's own names are touched only by
that actor (and never again once forgotten: a remember would reactivate them), while the shared
names only ever receive appends, from every client at once, including the race to create them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SHARED_NAMES = 6
IMPORT_SIZE = 4
FILLER = "load test memory written while other processes write the same file"

# Relative weights of each kind of call.
MIX: dict[str, int] = {
    "remember_new": 30,
    "append_own": 22,
    "append_shared": 14,
    "recall": 14,
    "forget_entity": 7,
    "forget_observation": 4,
    "import": 5,
    "refused": 4,
}


@dataclass
class Expected:
    """What the database must hold for one name."""

    observations: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    forgotten: bool = False


@dataclass
class Journal:
    """Every acknowledged write, and everything a client saw that it did not expect."""

    entities: dict[str, Expected] = field(default_factory=dict)
    refused_names: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    latencies: dict[str, list[float]] = field(default_factory=dict)

    def expect(self, name: str) -> Expected:
        return self.entities.setdefault(name, Expected())

    def count(self, transport: str, kind: str, seconds: float) -> None:
        key = f"{transport}:{kind}"
        self.counts[key] = self.counts.get(key, 0) + 1
        self.latencies.setdefault(transport, []).append(seconds)

    def as_json(self) -> dict[str, Any]:
        return {
            "entities": {
                name: {
                    "observations": sorted(e.observations),
                    "removed": sorted(e.removed),
                    "forgotten": e.forgotten,
                }
                for name, e in self.entities.items()
            },
            "refused_names": sorted(self.refused_names),
        }


@dataclass
class Call:
    """One operation call: what to send, and what to record once it is acknowledged.

    `check(result)` returns None when the operation's answer is right (and records the
    promise), or a description of what was wrong. `refused` calls must come back as a
    validation error and never write.
    """

    kind: str
    operation: str
    payload: dict[str, Any]
    check: Callable[[dict[str, Any]], str | None]
    refused: bool = False


class Actor:
    """One client's deterministic stream of calls (seeded by its id)."""

    def __init__(self, client: str, journal: Journal, seed: int) -> None:
        self.client = client
        self.journal = journal
        self.rng = random.Random(f"{seed}:{client}")
        self.serial = 0
        self.live: list[str] = []  # own names that may still be written to
        self.kinds = list(MIX)
        self.weights = [MIX[k] for k in self.kinds]

    def token(self) -> str:
        """A word no other observation contains (letters and digits only)."""
        self.serial += 1
        return f"{self.client}x{self.serial}q"

    def observation(self) -> str:
        return f"{self.token()} {FILLER}"

    def next_call(self) -> Call:
        kind = self.rng.choices(self.kinds, self.weights)[0]
        if not self.live and kind not in ("remember_new", "append_shared", "import", "refused"):
            kind = "remember_new"
        return getattr(self, f"_{kind}")()

    # --- the kinds of call -------------------------------------------------------------

    def _remember_new(self) -> Call:
        name = f"{self.client}-n{self.serial + 1}"
        first, second = self.observation(), self.observation()
        payload = {
            "name": name,
            "type": "note",
            "observations": [first, second],
            "tags": [f"client:{self.client}"],
        }

        def check(result: dict[str, Any]) -> str | None:
            if result.get("created") is not True or result.get("observations") != 2:
                return f"remember {name}: {result}"
            self.journal.expect(name).observations.update([first, second])
            self.live.append(name)
            return None

        return Call("remember_new", "remember", payload, check)

    def _append_own(self) -> Call:
        return self._append(self.rng.choice(self.live), "append_own")

    def _append_shared(self) -> Call:
        return self._append(f"shared-{self.rng.randrange(SHARED_NAMES)}", "append_shared")

    def _append(self, name: str, kind: str) -> Call:
        text = self.observation()
        payload = {"name": name, "type": "note", "observations": [text]}

        def check(result: dict[str, Any]) -> str | None:
            if result.get("observations") != 1:
                return f"append to {name}: {result}"
            self.journal.expect(name).observations.add(text)
            return None

        return Call(kind, "remember", payload, check)

    def _recall(self) -> Call:
        name = self.rng.choice(self.live)
        expected = self.journal.entities[name]
        word = sorted(expected.observations - expected.removed)[0].split()[0]

        def check(result: dict[str, Any]) -> str | None:
            found = [e["name"] for e in result.get("entities", [])]
            # Read-your-writes across processes: the write was acknowledged before this call.
            if name not in found:
                return f"recall {word!r} did not find {name}: {found}"
            return None

        return Call("recall", "recall", {"query": word, "limit": 5}, check)

    def _forget_entity(self) -> Call:
        name = self.live.pop(self.rng.randrange(len(self.live)))

        def check(result: dict[str, Any]) -> str | None:
            if result.get("archived") is not True:
                self.live.append(name)
                return f"forget {name}: {result}"
            self.journal.expect(name).forgotten = True
            return None

        return Call("forget_entity", "forget", {"name": name}, check)

    def _forget_observation(self) -> Call:
        name = self.rng.choice(self.live)
        expected = self.journal.entities[name]
        kept = sorted(expected.observations - expected.removed)
        if len(kept) < 2:  # keep one observation, so recall has a word to look for
            return self._append(name, "append_own")
        text = kept[-1]

        def check(result: dict[str, Any]) -> str | None:
            if result.get("removed") is not True or result.get("removedCount") != 1:
                return f"forget observation of {name}: {result}"
            expected.removed.add(text)
            return None

        return Call("forget_observation", "forget", {"name": name, "observation": text}, check)

    def _import(self) -> Call:
        self.serial += 1
        entries = []
        for i in range(IMPORT_SIZE):
            name = f"{self.client}-i{self.serial}-{i}"
            entries.append({"name": name, "type": "note", "observations": [self.observation()]})
        payload = {"data": {"entities": entries}, "merge_strategy": "skip"}

        def check(result: dict[str, Any]) -> str | None:
            if result.get("imported") != IMPORT_SIZE or result.get("errors"):
                return f"import: {result}"
            for entry in entries:
                self.journal.expect(entry["name"]).observations.update(entry["observations"])
                self.live.append(entry["name"])
            return None

        return Call("import", "import", payload, check)

    def _refused(self) -> Call:
        # A new name without a type: a validation error before the first write.
        name = f"{self.client}-refused{self.serial + 1}"
        payload = {"name": name, "observations": [self.observation()]}

        def check(result: dict[str, Any]) -> str | None:
            code = str(result.get("errorCode", ""))
            if not code.startswith("validation."):
                return f"refused call for {name} answered {result}"
            self.journal.refused_names.add(name)
            return None

        return Call("refused", "remember", payload, check, refused=True)
