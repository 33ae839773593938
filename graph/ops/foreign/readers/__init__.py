"""One module per foreign format; each exposes `read(source: Path, *, project: str | None)`
returning an iterator of `ForeignMemory | ForeignProblem` (graph/ops/foreign/records.py)."""
