"""`memesh verify`: retired; prints where to go instead and exits 1 (api/retired.py)."""

from __future__ import annotations

from api.cli.retired import RetiredCommand


class Command(RetiredCommand):
    help = "Retired: prints what to use instead and exits 1."
    feature = "verify"
