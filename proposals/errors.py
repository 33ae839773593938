"""The stable errors of the agent-facing review tools (`work_package`, `improvement`): what an
agent may not do, and why a work package's submission is refused. Each carries its errorCode
and HTTP status; every transport maps them through api/envelope.py like any memesh error."""

from __future__ import annotations

from core.errors import MemeshError


class HumanReviewOnly(MemeshError):
    """An agent asked to apply, accept or reject: only a person reviews, in /review/ or with
    `memesh dream|improvement accept|reject`."""

    error_code = "review.human-only"
    http_status = 403


class NoWorkspaceRoot(MemeshError):
    """A transcript package needs one workspace root that holds agent sessions, and the
    caller supplied none (or none of its roots holds any)."""

    error_code = "work_package.no-workspace-root"
    http_status = 400


class AmbiguousWorkspaceRoot(MemeshError):
    """More than one of the client's workspace roots holds agent sessions: memesh does
    not guess which one the agent works in."""

    error_code = "work_package.ambiguous-workspace-root"
    http_status = 400


class StalePackage(MemeshError):
    """The package's sources changed (or are gone) since it was prepared: prepare again."""

    error_code = "work_package.stale"
    http_status = 409


class WorkspaceMismatch(MemeshError):
    """The submission comes from another workspace scope than the package was prepared in."""

    error_code = "work_package.workspace-mismatch"
    http_status = 409


class SecretInResult(MemeshError):
    """The submitted result holds what the capture-path detector takes for a secret: it never
    reaches a proposal (and so never the graph)."""

    error_code = "work_package.secret-in-result"
    http_status = 400


ERROR_CODES = (
    HumanReviewOnly.error_code,
    NoWorkspaceRoot.error_code,
    AmbiguousWorkspaceRoot.error_code,
    StalePackage.error_code,
    WorkspaceMismatch.error_code,
    SecretInResult.error_code,
)
