"""Loading integrations/hermes/memesh the way Hermes Agent loads a user memory provider.

Hermes (plugins/memory/__init__.py in Hermes Agent) imports a provider directory found under
`$HERMES_HOME/plugins/<name>/` as a package of a synthetic parent (so relative imports work
and two sources never collide), calls its `register(ctx)` with a context whose
`register_memory_provider` keeps the provider, and otherwise instantiates the first
MemoryProvider subclass it finds. This module does the same with the standard library: the
test process and tests/procs/hermes_in_process.py both use it.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import types
from pathlib import Path
from typing import Any

PLUGIN_DIR = Path(__file__).resolve().parent.parent / "integrations" / "hermes" / "memesh"
NAMESPACE = "_hermes_user_memory"


class ProviderCollector:
    """The part of Hermes's plugin context a memory provider's `register` calls."""

    def __init__(self) -> None:
        self.provider: Any = None

    def register_memory_provider(self, provider: Any) -> None:
        self.provider = provider


def install(hermes_home: Path) -> Path:
    """Copy the plugin to `$HERMES_HOME/plugins/memesh`, as the docs tell a user to."""
    target = hermes_home / "plugins" / "memesh"
    shutil.copytree(PLUGIN_DIR, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def load_provider(plugin_dir: Path) -> Any:
    """Import `plugin_dir` under the synthetic namespace and return what `register` gave."""
    # Hermes's discovery heuristic, before it imports anything.
    assert "MemoryProvider" in (plugin_dir / "__init__.py").read_text()
    if NAMESPACE not in sys.modules:
        parent = types.ModuleType(NAMESPACE)
        parent.__path__ = []
        sys.modules[NAMESPACE] = parent
    name = f"{NAMESPACE}.{plugin_dir.name}__source_{abs(hash(str(plugin_dir))):x}"
    spec = importlib.util.spec_from_file_location(
        name, plugin_dir / "__init__.py", submodule_search_locations=[str(plugin_dir)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    collector = ProviderCollector()
    module.register(collector)
    return collector.provider
