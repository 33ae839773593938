"""Data sets the benchmarks read (bench/data/quality/: the retrieval-quality set)."""
