"""Bearer-token authentication for a remote (non-loopback) `memesh serve` listener.

The requirement is keyed to the bind address, not to `--allow-remote`: a loopback listener is
never challenged. `memesh serve` provisions the token (MEMESH_REMOTE_TOKEN, else
MEMESH_HOME/remote-token, generated 0600 when missing) before it listens, and hands it to the
ASGI application with `configure()`. The gate (`challenge()`) runs on the raw ASGI scope,
before the request body is read or Django / MCP see the request, and compares tokens in
constant time.

Defence in depth: a connection whose local address is a non-loopback IP while no remote
listener was configured (the app served by some other means) is refused with
`auth.not-configured` rather than answered unauthenticated.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from core.errors import Failure
from core.paths import ensure_private_file, memesh_home

TOKEN_ENV = "MEMESH_REMOTE_TOKEN"
TOKEN_FILENAME = "remote-token"
# /api: the peer compatibility routes (api/rest/peer_views.py), guarded like /v1 when switched on.
PROTECTED_PREFIXES = ("/v1", "/mcp", "/api")


def is_loopback(host: str) -> bool:
    """True for localhost and loopback IP literals (IPv6 in brackets or not, IPv4-mapped too)."""
    host = host.strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def token_path() -> Path:
    return memesh_home() / TOKEN_FILENAME


@dataclass(frozen=True)
class ProvisionedToken:
    token: str
    source: str  # "MEMESH_REMOTE_TOKEN" or the token file's path


def provision_token() -> ProvisionedToken:
    """MEMESH_REMOTE_TOKEN if set, else the token file, created 0600 with a fresh token when it
    is missing or empty. An existing file is tightened to 0600."""
    explicit = settings.MEMESH_REMOTE_TOKEN
    if explicit:
        return ProvisionedToken(explicit, TOKEN_ENV)
    path = token_path()
    if path.exists():
        if stat.S_IMODE(path.stat().st_mode) != 0o600:
            os.chmod(path, 0o600)
        existing = path.read_text().strip()
        if existing:
            return ProvisionedToken(existing, str(path))
    ensure_private_file(path)
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")
    return ProvisionedToken(token, str(path))


@dataclass
class ListenerConfig:
    remote: bool = False
    token: str | None = None


# Set by `memesh serve` before uvicorn imports and starts the application: directly in its own
# process, and through LISTENER_ENV for worker processes, which read the token themselves.
listener = ListenerConfig()
LISTENER_ENV = "MEMESH_SERVE_LISTENER"


def configure(*, remote: bool, token: str | None) -> None:
    listener.remote = remote
    listener.token = token or None


def export_to_workers() -> None:
    """Worker processes started after this (uvicorn --workers) inherit the environment: tell
    them which kind of listener they serve. The token itself never travels in it."""
    os.environ[LISTENER_ENV] = "remote" if listener.remote else "loopback"


def configure_from_environment() -> None:
    """In a worker process of `memesh serve`: the listener its parent configured. The parent
    provisioned the token first, so reading it here finds the same one.

    Read from the environment, not settings: it is a message from `memesh serve`, set after
    its settings loaded, to the application it starts (memesh_site/settings.py names these)."""
    kind = os.environ.get(LISTENER_ENV)
    if kind == "remote" and not listener.remote:
        listener.remote = True
        listener.token = provision_token().token


def is_protected(path: str) -> bool:
    # Collapse repeated slashes so `//v1/health` cannot slip past the prefix test.
    normalized = "/" + "/".join(part for part in path.split("/") if part)
    return any(normalized == p or normalized.startswith(p + "/") for p in PROTECTED_PREFIXES)


def _local_address_is_remote(scope: dict[str, Any]) -> bool:
    server = scope.get("server")
    if not server:
        return False
    host = str(server[0])
    try:
        ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return False  # not an IP literal (unix socket, test transports): nothing to infer
    return not is_loopback(host)


def _bearer(scope: dict[str, Any]) -> bytes:
    """The credentials of an `Authorization: Bearer <token>` header, as sent; empty if none."""
    for name, value in scope.get("headers", []):
        if name.lower() == b"authorization":
            scheme, _, credentials = bytes(value).strip().partition(b" ")
            return credentials.strip() if scheme.lower() == b"bearer" else b""
    return b""


Rejection = tuple[int, str, str]


def challenge(scope: dict[str, Any]) -> Rejection | None:
    """None when the request may proceed, else (status, errorCode, message)."""
    if scope.get("type") not in ("http", "websocket") or not is_protected(scope.get("path", "")):
        return None
    if not listener.remote and not _local_address_is_remote(scope):
        return None
    if not listener.token:
        return (
            503,
            "auth.not-configured",
            "This server listens beyond loopback but no bearer token was provisioned",
        )
    presented = _bearer(scope)
    if not presented:
        return (
            401,
            "auth.missing-bearer",
            "Missing bearer token: send 'Authorization: Bearer <token>'",
        )
    if not hmac.compare_digest(presented, listener.token.encode()):
        return 401, "auth.invalid-token", "Invalid bearer token"
    return None


async def reject(scope: dict[str, Any], rejection: Rejection, send: Any) -> None:
    status, code, message = rejection
    if scope.get("type") == "websocket":
        await send({"type": "websocket.close", "code": 1008})  # policy violation
        return
    body = Failure(status, code, message).to_json().encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if code == "auth.invalid-token":
        headers.append((b"www-authenticate", b'Bearer realm="memesh", error="invalid_token"'))
    elif status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="memesh"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
