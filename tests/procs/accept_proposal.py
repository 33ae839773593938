"""Accept one proposal in this process: `accept_proposal.py PROPOSAL_ID`.

Calls proposals.decisions.proposal_accept (channel cli) against the database named by
MEMESH_HOME / MEMESH_DB_PATH and prints the result as JSON; exits non-zero on an exception.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "memesh_site.settings"


def main() -> None:
    import django

    django.setup()
    from proposals.decisions import proposal_accept

    result = proposal_accept(int(sys.argv[1]), channel="cli", reviewer="crash-test")
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
