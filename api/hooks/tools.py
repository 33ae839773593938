"""What the hooks recognise in the hosts' tool calls: the tools that edit a file (Claude Code's
edit tools, Codex's `apply_patch` and the files its patch names) and the shell commands that
make a commit (and the line git prints for one).

Its own module, with no imports of memesh: PreToolUse and PostToolUse test a tool call against
these, and most calls they see need nothing else (not the transcript reader, which brings the
session-evidence and capture services with it).
"""

from __future__ import annotations

import re

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
PATCH_TOOL = "apply_patch"  # Codex's edit tool: one patch may add, change or move several files
# `*** Add File: a.py`, `*** Update File: b.py`, `*** Delete File: c.py`, `*** Move to: d.py`
PATCH_FILE = re.compile(
    r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$", re.MULTILINE
)
COMMIT_COMMAND = re.compile(r"\bgit\b[^|;&\n]*\bcommit\b")
# `[main 1a2b3c4] subject`, `[main (root-commit) 1a2b3c4] subject`
COMMIT_LINE = re.compile(r"^\[([^\s\]]+)(?: \([\w -]+\))? ([0-9a-f]{7,40})\] (.*)$", re.MULTILINE)


def patch_files(patch: str) -> list[str]:
    """The files an `apply_patch` patch names, in order, each once."""
    return list(dict.fromkeys(m.strip() for m in PATCH_FILE.findall(patch)))
