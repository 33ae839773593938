"""The refusals of an import from another program's files, each with its stable errorCode:
the whole import stops before anything is written."""

from __future__ import annotations

from core.errors import MemeshError


class UnknownFormat(MemeshError):
    """`--from` names a format memesh has no reader for."""

    error_code = "import.unknown-format"
    http_status = 400


class SourceMissing(MemeshError):
    """The path to import from does not exist (or cannot be read)."""

    error_code = "import.source-not-found"
    http_status = 404


class NotThisFormat(MemeshError):
    """The path exists but does not hold the format asked for: another program's database, a
    truncated one, a file that is not JSON Lines. Raised by the readers, in one sentence."""

    error_code = "import.wrong-format"
    http_status = 400


class StoppedAtProblem(MemeshError):
    """`--strict`: the first malformed record stops the import, nothing written."""

    error_code = "import.bad-record"
    http_status = 400
