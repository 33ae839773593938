"""memesh's Django project: settings, entry points and the process plumbing around them."""

import os

# numpy's OpenBLAS keeps a thread per core spinning for a while after each matrix product.
# Beside onnxruntime's own threads on a small machine, that made every model call of the
# embedding worker ~25 % slower (docs/performance-notes.md, "Late interaction: what it
# costs"). memesh's matrix products are small, so one thread does them; set before any memesh
# process imports numpy (every entry point imports this package first), and a user's own
# setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
