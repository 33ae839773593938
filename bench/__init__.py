"""Benchmark scripts (never tests): each prints figures, run from the repository root as
`python -m bench.<name>` (docs/benchmarks.md, docs/performance-notes.md)."""
