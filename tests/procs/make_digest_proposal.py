"""Create one pending digest proposal over every active memory: `make_digest_proposal.py`.

Written straight into the proposals table (as the dreamer stages one) against the database
named by MEMESH_HOME / MEMESH_DB_PATH; prints the proposal id.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "memesh_site.settings"

DIGEST_NAME = "crash-digest"


def main() -> None:
    import django

    django.setup()
    from graph.models import Entity, Status
    from proposals.models import Proposal, ProposalKind, ProposalStatus

    sources = list(
        Entity.objects.filter(status=Status.ACTIVE).order_by("id").values_list("id", flat=True)
    )
    proposal = Proposal.objects.create(
        kind=ProposalKind.DIGEST,
        status=ProposalStatus.PENDING,
        fingerprint="crash-test-digest",
        source_ids=sources,
        proposed={
            "name": DIGEST_NAME,
            "type": "digest",
            "observations": ["digestword summary of every imported memory"],
            "tags": ["digest"],
        },
    )
    sys.stdout.write(f"{proposal.pk}\n")


if __name__ == "__main__":
    main()
