"""The retrieval-quality data set, its generator and its checker (see README.md here)."""
