"""`memesh unpin`: let the dreamer compact an entity again (removes metadata.pin)."""

from __future__ import annotations

from api.cli.base import PinCommand
from graph.ops.pin import UNPIN


class Command(PinCommand):
    help = UNPIN.summary
    operation = UNPIN
