"""What memesh retired on purpose, and where each caller goes instead (the API reference's
"consolidate — retired" and its /v1/verify row). One entry per retired feature, read by both
its transports: POST /v1/<name> answers 410 `route.retired` with the REST pointer
(api/rest/views.py), and `memesh <name>` prints the CLI pointer and exits 1 — with --json the same
failure envelope, `replacement` naming the command to use, on stderr. Neither is a 404 or a
usage error: a script author reads the difference.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import Failure

RETIRED_CODE = "route.retired"


@dataclass(frozen=True)
class Retired:
    rest_message: str
    rest_replacement: str | None
    cli_message: str
    cli_replacement: str | None

    def rest_failure(self) -> Failure:
        return Failure(
            410, RETIRED_CODE, self.rest_message, extra={"replacement": self.rest_replacement}
        )

    def cli_failure(self) -> Failure:
        return Failure(
            410, RETIRED_CODE, self.cli_message, extra={"replacement": self.cli_replacement}
        )


RETIRED: dict[str, Retired] = {
    "consolidate": Retired(
        rest_message=(
            "POST /v1/consolidate was retired: it rewrote memories with no review. "
            "Use POST /v1/dream/run, which proposes changes for review."
        ),
        rest_replacement="POST /v1/dream/run",
        cli_message=(
            "memesh consolidate was removed: it deleted an entity's observations and wrote an "
            "LLM summary in their place at once, with no review and nothing to restore from. "
            "Use `memesh dream run` instead: it proposes digests and applies nothing until a "
            "proposal is accepted (`memesh dream list`, `memesh dream accept <id>`), keeps "
            "source_ids, and archives sources rather than deleting them. It is not a "
            "like-for-like replacement: dream merges clusters of episodic memories (commits, "
            "session notes) into a digest and never touches lessons, decisions, architecture "
            "notes or pinned entities; there is no reviewed way to compress one named entity"
        ),
        cli_replacement="memesh dream run",
    ),
    "verify": Retired(
        rest_message=(
            "POST /v1/verify was retired with the agentic-orchestration experiment; it has no "
            "replacement. Use POST /v1/recall to read memories."
        ),
        rest_replacement=None,
        cli_message=(
            "memesh verify was retired with the agentic-orchestration experiment; it has no "
            "replacement. Use `memesh recall` to read memories (`memesh doctor` checks the "
            "database and its indexes)"
        ),
        cli_replacement=None,
    ),
}
