"""Work packages: the agent guide's `work_package` tool, which hands an agent the material of a
dream pass to do itself and takes its results back (docs/work-packages.md). `operation.py` is the
operation, `sources.py` finds a package's material again from its id, `results.py` holds the
strict result models. Kept empty: the Stop hook reads `sources` without loading the operation."""
