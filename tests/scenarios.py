"""A scenario of writes that touches every way the keyword index can change, and the words it
leaves behind: the index consistency tests check the index after it, the consistency checker
tests check that it passes as clean."""

from __future__ import annotations

from graph.storage.keyword.tables import ARCHIVED_FTS, LIVE_FTS
from tests.helpers import forget, remember

# Each entity of the scenario, the word only it carries now, and where it must be indexed.
CURRENT_WORDS = {
    "alpha": ("quokkaline", LIVE_FTS),  # appended observation
    "alpha-title": ("yarrowmere", LIVE_FTS),  # alpha's second title
    "beta": ("betakeep", ARCHIVED_FTS),  # archived, then lost an observation
    "gamma": ("gammaword", LIVE_FTS),  # lost an observation
    "delta": ("deltaword", ARCHIVED_FTS),  # superseded
    "epsilon": ("epsilonword", LIVE_FTS),
    "zeta": ("zetareturn", LIVE_FTS),  # archived, then reactivated
    "eta": ("uniqtag", LIVE_FTS),  # tag only, moved namespace
}
# Words that were indexed once and must be gone from both tables.
REMOVED_WORDS = ["xylograph", "marmotwise", "betagone"]


def run_scenario() -> None:
    remember("alpha", "alpha word zebracorn", title="The xylograph")
    remember("alpha", "quokkaline appended", tags=["project:alpha"])
    remember("alpha", title="The yarrowmere")

    remember("beta", "betakeep word", "betagone word")
    forget("beta")
    forget("beta", observation="betagone word")

    remember("gamma", "gammaword remains", "transient marmotwise")
    forget("gamma", observation="transient marmotwise")

    remember("delta", "deltaword old design")
    remember("epsilon", "epsilonword new design", relations=[{"to": "delta", "type": "supersedes"}])

    remember("zeta", "zetafirst")
    forget("zeta")
    remember("zeta", "zetareturn")

    remember("eta", "eta word", tags=["uniqtag"])
    remember("eta", namespace="team")
