"""The memory tool's path space: `/memories`, `/memories/<namespace>`, and one file per entity,
`/memories/<namespace>/<name>.md`.

Pure Python (no Django): parsing, the percent-encoding of entity names, and every path refusal
in the reference's table ("Anthropic memory tool", "Refusals"). Nothing here touches a
filesystem, so traversal cannot escape anything — but `..`, `.`, `//` or an encoded dot could
still resolve to a different namespace or memory than the one named, which would be a silent
wrong write. So they are refused, never normalised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, cast, get_args

from core.errors import InvalidInput
from graph.ops.kit.fields import MAX_NAME, NamespaceName

ROOT: Final = "/memories"
NAMESPACES: Final[tuple[str, ...]] = get_args(NamespaceName)
SUFFIX: Final = ".md"

# Only these three are encoded, so every name has exactly one filename and back
# (`Project Apollo.md`, not `Project%20Apollo.md`).
_ENCODE: Final = {"%": "%25", "/": "%2F", "\\": "%5C"}
_DECODE: Final = {"%25": "%", "%2F": "/", "%5C": "\\"}
_PERCENT: Final = re.compile(r"%(..)?", re.DOTALL)
_ENCODED_DOT: Final = re.compile(r"%2e", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class MemoryPath:
    """`/memories` (no namespace), a namespace directory (no name), or one memory file."""

    namespace: NamespaceName | None = None
    name: str | None = None

    def __str__(self) -> str:
        if self.namespace is None:
            return ROOT
        if self.name is None:
            return f"{ROOT}/{self.namespace}"
        return f"{ROOT}/{self.namespace}/{encode_name(self.name)}{SUFFIX}"


@dataclass(frozen=True, slots=True)
class MemoryFile:
    """A path known to name one memory file: both parts are set."""

    namespace: NamespaceName
    name: str

    def __str__(self) -> str:
        return str(MemoryPath(self.namespace, self.name))


def encode_name(name: str) -> str:
    """The filename stem of an entity name: `/`, `\\` and `%` percent-encoded, nothing else."""
    return "".join(_ENCODE.get(ch, ch) for ch in name)


def decode_name(stem: str) -> str:
    """Inverse of `encode_name`; any other `%` sequence is refused, not guessed at."""

    def replace(match: re.Match[str]) -> str:
        code = match.group(0).upper()
        if code == "%2E":
            # An encoded dot only exists to smuggle `.` or `..` past the traversal check.
            raise InvalidInput("Encoded dots (%2e) are not allowed in a path")
        if code not in _DECODE:
            raise InvalidInput(
                f"Invalid percent-encoding {match.group(0)!r}: only %2F (/), %5C (\\) and "
                "%25 (%) are encoded in a memory filename"
            )
        return _DECODE[code]

    return _PERCENT.sub(replace, stem)


def parse_path(raw: object) -> MemoryPath:
    """The address `raw` names, or `InvalidInput` saying which rule it breaks."""
    if not isinstance(raw, str):
        raise InvalidInput("A path must be a string")
    if raw != ROOT and not raw.startswith(ROOT + "/"):
        # Checked with the separator: `/memories-of-you/x` starts with `/memories` too.
        raise InvalidInput(f"Path {raw!r} is outside {ROOT}")
    if "\x00" in raw:
        raise InvalidInput("A path must not contain NUL")
    if "\\" in raw:
        raise InvalidInput("A path must not contain a backslash (write it as %5C)")
    segments = raw[len(ROOT) + 1 :].split("/") if raw != ROOT else []
    for segment in segments:
        if segment in ("", ".", ".."):
            raise InvalidInput(f"Path {raw!r} has an empty, `.` or `..` segment")
        if _ENCODED_DOT.search(segment):
            raise InvalidInput("Encoded dots (%2e) are not allowed in a path")
    if len(segments) > 2:
        raise InvalidInput(f"Path {raw!r} is too deep: paths are {ROOT}/<namespace>/<name>.md")
    if not segments:
        return MemoryPath()
    if segments[0] not in NAMESPACES:
        raise InvalidInput(
            f"Unknown namespace {segments[0]!r}: expected one of {', '.join(NAMESPACES)}"
        )
    namespace = cast(NamespaceName, segments[0])
    if len(segments) == 1:
        return MemoryPath(namespace)
    filename = segments[1]
    if not filename.endswith(SUFFIX) or filename == SUFFIX:
        raise InvalidInput(f"Memory files are named <name>.md (got {filename!r})")
    name = decode_name(filename[: -len(SUFFIX)])
    if "\x00" in name:
        raise InvalidInput("A path must not contain NUL")
    if name in (".", ".."):
        raise InvalidInput(f"Path {raw!r} names `.` or `..`")
    if not name.strip() or name != name.strip():
        raise InvalidInput("A memory name must not be blank or start or end with whitespace")
    if len(name) > MAX_NAME:
        raise InvalidInput(f"A memory name is at most {MAX_NAME} characters")
    return MemoryPath(namespace, name)


def parse_file_path(raw: object, verb: str) -> MemoryFile:
    """`parse_path`, refusing the root and the namespaces: they are directories the tool
    defines, and the contract tells Claude it cannot write, delete or rename them."""
    path = parse_path(raw)
    if path.namespace is None or path.name is None:
        raise InvalidInput(f"Cannot {verb} {path}: it is a directory")
    return MemoryFile(path.namespace, path.name)
