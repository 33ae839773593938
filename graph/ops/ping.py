"""ping: a health check an agent can call — who it is to memesh, the embedder, the backend.

The embedder is named from the configuration without a call; `probe: true` embeds one short
text to say whether it is reachable (a paid request for a remote provider, hence opt-in, as
`memesh doctor --probe`). Nothing is written.
"""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from pydantic import Field

from core.db.postgres.extensions import server_info
from core.redact import redact
from graph.embedding import provider
from graph.embedding.base import EmbedderError
from graph.indexing import generations
from graph.models import Entity, Status
from graph.ops.kit.fields import Output, StrictInput
from graph.ops.kit.operation import READ_ONLY, CallContext, Operation

MAX_MESSAGE_CHARS = 1000


class PingInput(StrictInput):
    message: str | None = Field(
        default=None, max_length=MAX_MESSAGE_CHARS, description="Echoed back (default `pong`)."
    )
    probe: bool = Field(
        default=False,
        description=(
            "Embed one short text to check the embedder answers (a paid call for a remote "
            "provider). Default: report the configured embedder without calling it."
        ),
    )


class PingAgent(Output):
    source_host: str = Field(
        description="Who memesh takes the caller to be: the MCP client's name, `cli`, `http`."
    )
    project: str | None = Field(description="The project the caller's writes are filed under.")


class PingEmbedder(Output):
    provider: str = Field(description="`local`, `ollama`, `openai`, ..., or `none`.")
    identity: str | None = Field(description="provider/model, null for keyword-only.")
    probed: bool
    reachable: bool | None = Field(description="Probed: whether it answered; else null.")
    dimensions: int | None = Field(description="Vector width, when known.")
    error: str | None = Field(description="Why it is unreachable or misconfigured.")


class PingBackend(Output):
    engine: str = Field(description="`sqlite`, or `postgresql` on a team server's database.")
    version: str = Field(description="The SQLite library's version (the server's on PostgreSQL).")
    vectors: bool = Field(
        description="Whether the sqlite-vec extension is loaded (pgvector is, on PostgreSQL)."
    )
    memories: int = Field(description="Active memories.")


class PingOutput(Output):
    message: str
    version: str = Field(description="memesh's version.")
    agent: PingAgent
    embedder: PingEmbedder
    backend: PingBackend


def _embedder(probe: bool) -> PingEmbedder:
    try:
        embedder = provider.current()
    except Exception as exc:  # a configuration that cannot be read: say so, do not fail
        return PingEmbedder(
            provider="unknown",
            identity=None,
            probed=False,
            reachable=None,
            dimensions=None,
            error=redact(str(exc)),
        )
    if embedder is None:
        return PingEmbedder(
            provider="none",
            identity=None,
            probed=False,
            reachable=None,
            dimensions=None,
            error=None,
        )
    if not probe:
        return PingEmbedder(
            provider=embedder.provider,
            identity=embedder.identity,
            probed=False,
            reachable=None,
            dimensions=embedder.dimensions,
            error=None,
        )
    try:
        width = generations.probe_width(embedder)
    except EmbedderError as exc:
        return PingEmbedder(
            provider=embedder.provider,
            identity=embedder.identity,
            probed=True,
            reachable=False,
            dimensions=embedder.dimensions,
            error=redact(f"{exc.kind}: {exc}"),
        )
    return PingEmbedder(
        provider=embedder.provider,
        identity=embedder.identity,
        probed=True,
        reachable=True,
        dimensions=width,
        error=None,
    )


def memesh_ping(*, data: PingInput, ctx: CallContext) -> PingOutput:
    connection.ensure_connection()
    if connection.vendor == "postgresql":
        info = server_info(connection)
        engine, engine_version, vectors = "postgresql", info.version, info.pgvector is not None
    else:
        with connection.cursor() as cur:
            cur.execute("SELECT sqlite_version()")
            (engine_version,) = cur.fetchone()
        engine, vectors = "sqlite", bool(getattr(connection, "vec_available", False))
    return PingOutput(
        message=data.message if data.message is not None else "pong",
        version=str(settings.VERSION),
        agent=PingAgent(source_host=ctx.source_host, project=ctx.project),
        embedder=_embedder(data.probe),
        backend=PingBackend(
            engine=engine,
            version=str(engine_version),
            vectors=vectors,
            memories=Entity.objects.filter(status=Status.ACTIVE).count(),
        ),
    )


def _ping(data: PingInput, ctx: CallContext) -> PingOutput:
    return memesh_ping(data=data, ctx=ctx)


PING = Operation(
    name="ping",
    summary=(
        "Health check: echoes a message and reports who the caller is to memesh, the "
        "configured embedder (probed on request) and the storage backend."
    ),
    input_model=PingInput,
    output_model=PingOutput,
    handler=_ping,
    hints=READ_ONLY,
    examples=[{"message": "hello"}],
)
