"""`memesh pin`: protect an entity from the dreamer's compaction (metadata.pin = true)."""

from __future__ import annotations

from api.cli.base import PinCommand
from graph.ops.pin import PIN


class Command(PinCommand):
    help = PIN.summary
    operation = PIN
