"""ASGI entry point: MCP streamable HTTP at /mcp, Django (in a thread pool) for everything else.

Django's own ASGI handler runs every sync view on one shared thread; api/edge/wsgi_bridge.py
runs them on a pool, so requests proceed in parallel (SQLite WAL serves concurrent readers).

The MCP session manager keeps its sessions in a task group that lives for the whole server,
entered through ASGI lifespan (`memesh serve` runs uvicorn with lifespan on). Django never sees
a lifespan event: its behaviour is what it was before /mcp existed.

On a remote (non-loopback) listener every /v1 and /mcp request must carry the bearer token;
the check (api/edge/remote_auth.py) runs here, before the body is read.

`memesh serve --workers N` imports this module in each of N processes; with more than one,
/mcp runs stateless (api/mcp_server/http.py explains why and what that keeps).
"""

import asyncio
import hmac
import json
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from api.cli import forward as cli_forward
from api.edge import rate_limit, remote_auth
from api.mcp_server import http as mcp_http
from core import json_limits, lifecycle, request_activity
from core.env import envint
from core.heap import freeze_startup_heap

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memesh_site.settings")

from django.conf import settings
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from api.edge.wsgi_bridge import WSGIBridge
from core.errors import Failure
from memesh_site.wsgi import application as wsgi_application  # sets Django up

from api.rest import fast_path as direct_routes  # isort: skip  (it loads models: after the setup)

MCP_PATH = "/mcp"
# Set by `memesh serve` for the application it starts, after its own settings loaded (so read
# here, not in settings): how many processes serve this listener. With one, uvicorn runs the
# application in serve's process, where settings hold whatever the user's environment said.
WORKERS_ENV = "MEMESH_HTTP_WORKERS"

Scope = dict[str, Any]
Receive = Any  # the ASGI callables; the SDK has its own protocol types
Send = Any

# Django's responses are iterables of bytes; its stubs type __call__ as returning a response.
django_application = WSGIBridge(
    wsgi_application,  # type: ignore[arg-type]
    threads=settings.MEMESH_HTTP_THREADS,
    max_body=settings.MEMESH_MAX_BODY_BYTES,
    direct=direct_routes.answer,
)


def mcp_security() -> TransportSecuritySettings:
    """DNS-rebinding protection: a web page must not reach a loopback server through a name it
    controls. The hosts Django accepts are the hosts /mcp accepts, on any port."""
    hosts = [h for h in settings.ALLOWED_HOSTS if h not in ("testserver", "*")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:*" for h in hosts] + hosts,
        allowed_origins=[f"http://{h}:*" for h in hosts] + [f"http://{h}" for h in hosts],
    )


class MemeshApplication:
    """Routes /mcp to the SDK's streamable HTTP session manager and everything else to Django,
    and runs the session manager for the lifetime of the server (ASGI lifespan)."""

    def __init__(self, django_app: Any) -> None:
        # Imported here, after django.setup(): the MCP server loads the registry and its models.
        from api.mcp_server.server import build_server
        from graph.project import project_id

        self.django_app = django_app
        workers = envint(WORKERS_ENV, 1)
        self.stateless = workers > 1
        self.limiter = rate_limit.configured_limiter(workers)
        # The session's bound project is the directory `memesh serve` was started in.
        self.mcp = StreamableHTTPSessionManager(
            app=build_server(project=project_id()),
            security_settings=mcp_security(),
            stateless=self.stateless,
        )
        self.mcp_running = False
        # Set by `memesh serve` (api/cli/forward.py): without it no command is run.
        self.cli_token = os.environ.get(cli_forward.TOKEN_ENV, "")

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.mcp.run():
            self.mcp_running = True
            try:
                yield
            finally:
                self.mcp_running = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.route(scope, receive, send)
            return
        # The background worker waits for a quiet moment before each model call
        # (core/request_activity.py): it sees this request's start and its end.
        request_activity.note_request()
        try:
            await self.route(scope, receive, send)
        finally:
            request_activity.note_request()

    async def route(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The rate limit, then a remote listener's bearer check: both before the body is read
        # or Django / MCP see the request.
        if (
            self.limiter is not None
            and scope["type"] == "http"
            and remote_auth.is_protected(scope.get("path", ""))
        ):
            wait = self.limiter.retry_after(rate_limit.client_address(scope))
            if wait > 0:
                await rate_limit.reject(send, wait)
                return
        rejection = remote_auth.challenge(scope)
        if rejection is not None:
            await remote_auth.reject(scope, rejection, send)
            return
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
        elif scope["type"] == "http" and scope["path"].rstrip("/") == MCP_PATH:
            await self.handle_mcp(scope, receive, send)
        elif scope["type"] == "http" and scope["path"] == cli_forward.CLI_PATH:
            await self.handle_cli(scope, receive, send)
        else:
            await self.django_app(scope, receive, send)

    async def handle_mcp(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.mcp_running:
            # Served without lifespan (e.g. uvicorn --lifespan off): say so instead of a 500.
            failure = Failure(
                503,
                "server.internal",
                "MCP is unavailable: the server was started without ASGI lifespan",
            )
            body = failure.to_json().encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": failure.status,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await mcp_http.serve(
            self.mcp.handle_request,
            scope,
            receive,
            send,
            stateless=self.stateless,
            max_body=settings.MEMESH_MAX_BODY_BYTES,
        )

    async def handle_cli(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A `memesh` command forwarded by a CLI process of this machine's user
        (api/cli/forward.py). Anyone else gets the 404 of a path that does not exist."""
        from api.cli.runner import CLI_THREAD, BadRequest, parse_request, run_command

        headers = dict(scope.get("headers") or [])
        supplied = headers.get(cli_forward.TOKEN_HEADER.lower().encode(), b"")
        client = (scope.get("client") or ("",))[0]
        if not (
            self.cli_token
            and scope.get("method") == "POST"
            and remote_auth.is_loopback(str(client))
            and hmac.compare_digest(supplied, self.cli_token.encode())
        ):
            await _send_json(send, 404, Failure(404, "route.not-found", "Not found").to_json())
            return
        body = b""
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            # A hook's payload rides in the body (cli_forward.MAX_STDIN_BYTES), so the limit is
            # that of the CLI route, not the API's 1 MB; a CLI process that gets the 413 runs
            # the command itself.
            if len(body) > cli_forward.MAX_REQUEST_BYTES:
                await _send_json(
                    send, 413, Failure(413, "payload.too-large", "Request body too large").to_json()
                )
                return
        try:
            request = parse_request(json_limits.loads(body))
        except (BadRequest, ValueError) as exc:
            await _send_json(send, 400, Failure(400, "validation.bad-body", str(exc)).to_json())
            return
        loop = asyncio.get_running_loop()
        answer = await loop.run_in_executor(
            CLI_THREAD, run_command, request.argv, request.cwd, request.stdin
        )
        await _send_json(send, 200, json.dumps(answer))

    async def lifespan(self, receive: Receive, send: Send) -> None:
        # One task enters and leaves the session manager's task group, as anyio requires.
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        started = False
        try:
            async with self.running():
                # Everything start-up builds is in place (core/heap.py says why).
                freeze_startup_heap()
                await send({"type": "lifespan.startup.complete"})
                _warm_up_in_background()
                _write_accesses_in_background()
                started = True
                while (await receive())["type"] != "lifespan.shutdown":
                    pass
        except Exception as exc:
            if started:
                await send({"type": "lifespan.shutdown.failed", "message": repr(exc)})
            else:
                await send({"type": "lifespan.startup.failed", "message": repr(exc)})
            return
        await send({"type": "lifespan.shutdown.complete"})


def _warm_up_in_background() -> None:
    """Load the local model now, beside the first requests, rather than in the first recall
    (which would wait ~1 s for it), on the server's thread count
    (MEMESH_SERVER_EMBEDDER_THREADS)."""
    from django.conf import settings

    from graph.embedding import provider

    provider.use_threads(settings.MEMESH_SERVER_EMBEDDER_THREADS)
    threading.Thread(target=provider.warm_up, name="memesh-warm-up", daemon=True).start()


def _write_accesses_in_background() -> None:
    """Recall's access counts are written by a thread of this process, not by the recall
    that finds them due (graph/ops/recall/access.py)."""
    from graph.ops.recall.access import flush_in_background

    flush_in_background()


async def _send_json(send: Send, status: int, body: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body.encode()})


# A worker process of `memesh serve --workers N` learns its listener from the environment, and
# leaves if the server is killed outright.
remote_auth.configure_from_environment()
lifecycle.watch_serve_parent()
application = MemeshApplication(django_application)
