"""`memesh doctor`'s checks: is the database usable, which embedder is active and does it work,
what state the vector index is in, and whether both indexes agree with the memories
(graph/indexing/consistency.py); `fix()` is `memesh doctor --fix`. The vector index's state is
read by graph/status.py, which `memesh status` summarises too.

The checks leave here redacted (core/redact.py: the embedder's key literally, key-shaped
text, home paths), so `memesh doctor`, `--json` and GET /v1/doctor mask the same.

The Integrations section (whether memesh is set up in each agent host) is hosts/health.py's
`integration_checks()`, reported in the same `Check` shape under `integrations`."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, NotRequired, TypedDict

from django.db import connection

from core.redact import MASK, redact, url_without_credentials
from graph.embedding import provider
from graph.embedding.base import EmbedderError
from graph.embedding.config import load_config
from graph.indexing import consistency, generations
from graph.models import Entity
from graph.ops.kit.writes import request_embedding
from graph.status import DatabaseInfo, database_info, original_memesh_state, vector_index_state


@dataclass
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str
    data: dict[str, Any] | None = None


def run_checks(*, probe: bool = True) -> list[Check]:
    checks: list[Check] = []
    connection.ensure_connection()
    entities = Entity.objects.count()
    database = database_info()
    checks.append(
        Check(
            "database",
            "ok",
            f"{entities} memories" + _backend_text(database),
            {
                "entities": entities,
                "backend": database.backend,
                "version": database.version,
                "pgvector": database.pgvector,
            },
        )
    )
    original = original_memesh_state()
    if original is not None:
        # A warning while memories wait to be imported: the user sees it, doctor still passes.
        status = "warn" if original.not_imported else "ok"
        checks.append(Check("original MeMesh", status, original.sentence(), original.as_json()))
    # A team server's PostgreSQL: pgvector instead of sqlite-vec; the vector generations and
    # the indexes' consistency are checked on both (graph/storage/postgres/).
    on_server = database.backend == "postgresql"
    vec_error = getattr(connection, "vec_error", "not loaded")
    if on_server:
        checks.append(
            Check(
                "pgvector",
                "ok" if database.pgvector else "fail",
                database.pgvector or "not installed in the database",
            )
        )
    elif vec_error is None:
        checks.append(Check("sqlite-vec", "ok", "loaded"))
    else:
        checks.append(Check("sqlite-vec", "warn", f"not loaded ({vec_error}): keyword-only"))

    config = load_config()
    embedder = provider.current()
    if embedder is None:
        checks.append(
            Check(
                "embedder", "warn", "none configured: recall is keyword-only", {"provider": "none"}
            )
        )
    else:
        info: dict[str, Any] = {
            "provider": embedder.provider,
            "model": embedder.model,
            "identity": embedder.identity,
        }
        if config.base_url:
            info["baseUrl"] = url_without_credentials(config.base_url)
        if config.api_key:
            info["apiKey"] = MASK
        if probe:
            try:
                info["dimensions"] = generations.probe_width(embedder)
                checks.append(
                    Check(
                        "embedder",
                        "ok",
                        f"{embedder.identity} works ({info['dimensions']}-d)",
                        info,
                    )
                )
            except EmbedderError as exc:
                info["error"] = f"{exc.kind}: {exc}"
                checks.append(
                    Check(
                        "embedder",
                        "fail",
                        f"{embedder.identity} does not work: {info['error']}",
                        info,
                    )
                )
        else:
            checks.append(Check("embedder", "ok", f"{embedder.identity} (not probed)", info))
    vectors = generations.vectors_supported()
    checks.extend(_index_checks(embedder.identity if embedder else None, vectors))
    checks.append(consistency_check(consistency.check()))
    secrets = [config.api_key] if config.api_key else []
    for check in checks:
        check.detail = redact(check.detail, secrets)
        if check.data:
            check.data = redact(check.data, secrets)
    return checks


def _backend_text(database: DatabaseInfo) -> str:
    if database.backend != "postgresql":
        return ""
    return f" on PostgreSQL {database.version} (pgvector {database.pgvector or 'missing'})"


def _index_checks(identity: str | None, vec_loaded: bool) -> list[Check]:
    if not vec_loaded:
        return []
    out: list[Check] = []
    state = vector_index_state()
    live = state.live
    if live is None:
        out.append(
            Check(
                "vector index",
                "warn" if identity else "ok",
                "no vectors yet"
                + (" (the worker or `memesh embed` builds them)" if identity else ""),
            )
        )
    else:
        count, pending = state.vectors, state.pending
        data = {**live.as_json(), "vectors": count, "pending": pending}
        if identity is not None and live.identity != identity:
            out.append(
                Check(
                    "vector index",
                    "warn",
                    f"built by {live.identity} but {identity} is configured: semantic "
                    "search is off until `memesh reindex` completes",
                    data,
                )
            )
        elif pending:
            out.append(
                Check(
                    "vector index",
                    "warn",
                    f"generation {live.generation}: {count} vectors, {pending} memories "
                    "waiting (the worker or `memesh embed` catches up)",
                    data,
                )
            )
        else:
            out.append(
                Check(
                    "vector index",
                    "ok",
                    f"generation {live.generation}: {count} vectors, all current",
                    data,
                )
            )
    if state.staging_unreadable:
        out.append(
            Check(
                "staging index",
                "fail",
                "a half-built index has an unreadable marker: "
                "run `memesh reindex --discard-generation`",
            )
        )
    elif state.staging is not None:
        staging, rows, size = state.staging, state.staging_vectors, state.staging_bytes
        out.append(
            Check(
                "staging index",
                "warn",
                f"a half-built generation {staging.generation} of {staging.identity} "
                f"holds {rows} vectors ({size / 1e6:.1f} MB): `memesh reindex` "
                "resumes it, --discard-generation drops it",
                {**staging.as_json(), "vectors": rows, "bytes": size},
            )
        )
    last = state.last_error
    if last:
        out.append(Check("last embedding error", "warn", str(last.get("error", last)), last))
    return out


def consistency_check(report: consistency.ConsistencyReport) -> Check:
    """Fails when an index disagrees with the memories; vectors waiting for the embedding
    worker are normal and only mentioned."""
    return Check(
        "index consistency", "ok" if report.ok else "fail", report.summary(), report.as_json()
    )


def fix() -> consistency.RepairReport:
    """`memesh doctor --fix`: repair what the consistency check finds (through the managers
    the normal writes use), check again, and queue the embedding pass it calls for."""
    report = consistency.repair()
    if report.embedding_requested:
        request_embedding()
    return report


class DoctorReport(TypedDict):
    """The doctor's JSON: `memesh doctor --json` and GET /v1/doctor's `data`."""

    ok: bool  # no check failed (integrations do not count)
    checks: list[dict[str, Any]]  # each a Check as a dict
    integrations: NotRequired[list[dict[str, Any]]]
    fix: NotRequired[dict[str, Any]]  # `--fix`: the repair's report (RepairReport.as_json)
    probed: NotRequired[bool]  # GET /v1/doctor: whether the embedder was probed


def as_json(checks: list[Check], integrations: list[Check] | None = None) -> DoctorReport:
    report = DoctorReport(
        ok=all(c.status != "fail" for c in checks),
        checks=[asdict(c) for c in checks],
    )
    if integrations is not None:
        report["integrations"] = [asdict(c) for c in integrations]
    return report
