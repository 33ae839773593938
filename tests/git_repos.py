"""Real git repositories for the tests of `memesh why`: made with the `git` binary in a
temporary folder, with a local identity, so commits, renames and blame are git's own."""

from __future__ import annotations

import subprocess
from pathlib import Path


class GitRepo:
    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.name", "Test Author")
        self.git("config", "user.email", "author@example.com")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=self.root, capture_output=True, text=True, check=True, timeout=30
        )
        return done.stdout

    def write(self, path: str, text: str) -> Path:
        file = self.root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text)
        return file

    def commit(self, message: str, *paths: str) -> str:
        """Stage `paths` (everything when none) and commit; the new commit's full hash."""
        self.git("add", *(paths or ("-A",)))
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD").strip()
