"""What the hooks recognise in Claude Code's tool calls: the tools that edit a file and the
shell commands that make a commit (and the line git prints for one).

Its own module, with no imports of memesh: PreToolUse and PostToolUse test a tool call against
these, and most calls they see need nothing else (not the transcript reader, which brings the
session-evidence and capture services with it).
"""

from __future__ import annotations

import re

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
COMMIT_COMMAND = re.compile(r"\bgit\b[^|;&\n]*\bcommit\b")
# `[main 1a2b3c4] subject`, `[main (root-commit) 1a2b3c4] subject`
COMMIT_LINE = re.compile(r"^\[([^\s\]]+)(?: \([\w -]+\))? ([0-9a-f]{7,40})\] (.*)$", re.MULTILINE)
