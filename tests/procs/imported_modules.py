"""`memesh ARGS` run in this process as the `memesh` entry point runs it, with a note of what
it imported: `imported_modules.py OUT ARGS...` writes the name of every module in sys.modules
when the process exits (after the command, whichever way it ends), one a line, to OUT.

sys.modules, not `python -X importtime`: importtime does not see a module imported through
importlib.import_module (Django's apps and commands, the hook dispatcher's handlers).
"""

from __future__ import annotations

import atexit
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
OUT = Path(sys.argv[1])


def _write_imported() -> None:
    OUT.write_text("".join(f"{name}\n" for name in sorted(sys.modules)))


atexit.register(_write_imported)

from memesh_site.cli import main  # noqa: E402  (after the hook that records what it imports)

main(sys.argv[2:])
