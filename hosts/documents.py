"""A host's configuration file: read and parsed (a file memesh cannot parse is refused, never
overwritten), the change to it as a unified diff, and writing it.

A write is atomic (a temporary file in the same folder, fsynced, renamed over the file, so the
host never reads half a file) and keeps the previous content beside it as
`<name>.memesh-backup`. It goes through a symlink to the file it points at (a dotfiles
repository keeps its link), keeps the file's mode (new files are 0600: these files can hold
tokens), and refuses when the file changed since it was read (a host rewrites its own state
file while it runs; the user runs the command again).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.toml_document import TOMLDocument

from core.errors import MemeshError

BACKUP_SUFFIX = ".memesh-backup"
NEW_FILE_MODE = 0o600


class HostConfigInvalid(MemeshError):
    """A host's file is not valid JSON or TOML, or not of the shape the host documents:
    memesh does not guess, and does not overwrite it."""

    error_code = "setup.invalid-config"
    http_status = 400


class HostConfigChanged(MemeshError):
    error_code = "setup.config-changed"
    http_status = 409


class HostConfigUnwritable(MemeshError):
    error_code = "setup.cannot-write"
    http_status = 500


def read_text(path: Path) -> str | None:
    """The file's text, or None when it does not exist."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise HostConfigInvalid(f"{path} cannot be read: {exc}") from None


def parse_json(path: Path, text: str | None) -> dict[str, Any]:
    """The JSON object the file holds ({} for a missing or empty file)."""
    if text is None or not text.strip():
        return {}
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HostConfigInvalid(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "memesh leaves it as it is: fix it, or add memesh's entries by hand "
            "(docs/integrations.md)"
        ) from None
    if not isinstance(loaded, dict):
        raise HostConfigInvalid(f"{path} holds a JSON {type(loaded).__name__}, not an object")
    return loaded


def parse_toml(path: Path, text: str | None) -> TOMLDocument:
    """The TOML document, comments and layout kept (an empty one for a missing file)."""
    try:
        return tomlkit.parse(text or "")
    except TOMLKitError as exc:
        raise HostConfigInvalid(
            f"{path} is not valid TOML ({exc}); memesh leaves it as it is: fix it, or add "
            "memesh's entries by hand (docs/integrations.md)"
        ) from None


def dump_json(document: dict[str, Any], like: str | None) -> str:
    """`document` as JSON indented like the text it replaces (two spaces for a new file)."""
    indent: int | str = 2
    if like:
        first = re.search(r"^([ \t]+)\S", like, re.MULTILINE)
        if first:
            found = first.group(1)
            indent = found if "\t" in found else len(found)
    return json.dumps(document, indent=indent, ensure_ascii=False) + "\n"


@dataclass
class FileChange:
    """What memesh does to one file; None for a file that does not exist (before), or that
    is not to exist (after: an uninstall that left nothing in the file, which is deleted)."""

    path: Path
    role: str  # what memesh keeps there: "hooks", "mcp" or "hooks and mcp"
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool:
        return self.after != self.before

    @property
    def backup_path(self) -> Path:
        return self.path.with_name(self.path.name + BACKUP_SUFFIX)

    def diff(self) -> str:
        """A unified diff from the file as it is to what memesh writes ("" when unchanged)."""
        if not self.changed:
            return ""
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile="/dev/null" if self.before is None else str(self.path),
            tofile=str(self.path),
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)

    def write(self) -> Path | None:
        """Write `after`, or delete the file when it is None (see the module docstring); the
        backup's path, when there was a previous file."""
        assert self.changed
        target = self.path.resolve() if self.path.is_symlink() else self.path
        try:
            return _replace(target, self.before, self.after, self.backup_path)
        except OSError as exc:
            raise HostConfigUnwritable(f"{self.path} cannot be written: {exc}") from None


def _replace(target: Path, before: str | None, after: str | None, backup: Path) -> Path | None:
    if read_text(target) != before:
        raise HostConfigChanged(
            f"{target} changed while memesh was preparing its change (is the host running and "
            "rewriting it?); nothing was written: run the command again"
        )
    if before is None:
        assert after is not None
        target.parent.mkdir(parents=True, exist_ok=True)
        _write_new(target, after, NEW_FILE_MODE)
        return None
    mode = target.stat().st_mode & 0o777
    _write_new(backup, before, mode)
    if after is None:
        target.unlink()
    else:
        _write_new(target, after, mode)
    return backup


def _write_new(path: Path, text: str, mode: int) -> None:
    """Replace `path` with `text` through a fsynced temporary file in the same folder."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fchmod(out.fileno(), mode)
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)  # the rename itself survives a crash
    finally:
        os.close(folder)
