"""Drive the Hermes provider in process, as a Hermes Agent process with memesh installed in
its environment would: `hermes_in_process.py HERMES_HOME`.

Loads the plugin from HERMES_HOME/plugins/memesh (tests/hermes_loader.py), then initialize →
memesh_remember → memesh_recall → prefetch → sync_turn (an explicit remember request, then one
carrying a secret) → shutdown, and prints one JSON object with what each call returned.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.hermes_loader import load_provider  # noqa: E402


def main(hermes_home: Path) -> None:
    provider = load_provider(hermes_home / "plugins" / "memesh")
    available = provider.is_available()
    provider.initialize("hermes-session-1", hermes_home=str(hermes_home), platform="cli")
    transport = provider._transport.kind
    remembered = json.loads(
        provider.handle_tool_call(
            "memesh_remember",
            {
                "name": "billing-database",
                "type": "decision",
                "observations": ["Billing runs on Postgres 16 in eu-west"],
                "why": "the ledger needs serializable transactions",
            },
        )
    )
    recalled = json.loads(provider.handle_tool_call("memesh_recall", {"query": "billing Postgres"}))
    prefetched = provider.prefetch("Which database does billing use?")
    provider.sync_turn("Remember that releases ship on Tuesdays only.", "Noted.")
    provider.sync_turn(
        "Remember that the deploy key is AKIAIOSFODNN7EXAMPLE for the release bucket.", "Ok."
    )
    invalid = json.loads(
        provider.handle_tool_call(
            "memesh_remember", {"name": "x", "type": "decision", "observations": "not a list"}
        )
    )
    provider.shutdown()
    sys.stdout.write(
        json.dumps(
            {
                "available": available,
                "transport": transport,
                "remembered": remembered,
                "recalled": recalled,
                "prefetched": prefetched,
                "invalid": invalid,
            }
        )
        + "\n"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
