"""Keeping the indexes in step with the graph: vector generations and the embedding pass,
reindex, and the consistency checker."""
