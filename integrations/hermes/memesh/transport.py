"""How the provider reaches memesh: in this process, or over its loopback HTTP API.

- In process (`InProcessTransport`): memesh is installed in the Python environment Hermes
  runs in. Django is set up with memesh's settings (the same MEMESH_HOME and database as every
  other memesh process), and each call runs the operation exactly as memesh's REST view does
  (`api.operations.OPERATIONS[name].run`), failures mapped by memesh's one envelope
  (`api.envelope.failure_for`).
- Over HTTP (`HttpTransport`): memesh lives elsewhere (its own pipx environment). Calls go to
  `POST <base>/v1/<operation>` and read the `{success, data}` envelope. The base is MEMESH_URL,
  else the running `memesh serve` recorded in MEMESH_HOME/serve.json, else
  http://127.0.0.1:3737. MEMESH_TOKEN, when set, is sent as `Authorization: Bearer` (a server
  listening beyond loopback requires memesh's remote token; a loopback one never asks).
  Standard library only, so the plugin needs nothing installed next to Hermes.

The capture after a turn (`capture_prompt`) is memesh's own UserPromptSubmit hook, run on the
user's message: an explicit "remember that …" request is stored as said, a request carrying a
secret is dropped by memesh's detector, and `autoCapture` off stores nothing. In process it is
called directly; over HTTP it is forwarded as the `memesh` CLI forwards it (the server's
`/_cli` endpoint, with the token serve.json holds — so only the server of this MEMESH_HOME, on
loopback, by the user who owns it). Without such a server nothing is captured.
"""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

DEFAULT_URL = "http://127.0.0.1:3737"
SERVE_RECORD = "serve.json"  # core/serve_record.py
CLI_PATH = "/_cli"  # api/cli/forward.py
CLI_TOKEN_HEADER = "X-Memesh-CLI-Token"
CAPTURE_EVENT = "user-prompt-submit"
# What this provider's writes are stamped with (`metadata.provenance.source_host`): the
# operations it runs in process carry the host's name, its captures the name memesh gives a
# hook run by that host (core/hook_hosts.py), so a memory tells Hermes wrote it.
SOURCE_HOST = "hermes-agent"
HOOK_HOST_ARGS = ("--host", SOURCE_HOST)
TIMEOUT_S = 15.0
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


class MemeshCallError(Exception):
    """A call memesh refused or could not answer, with memesh's stable errorCode."""

    def __init__(self, error_code: str, message: str) -> None:
        super().__init__(f"{error_code}: {message}")
        self.error_code = error_code
        self.message = message

    def envelope(self) -> dict[str, Any]:
        return {"success": False, "errorCode": self.error_code, "error": self.message}


class Transport(Protocol):
    kind: str

    def call(self, operation: str, payload: Mapping[str, Any]) -> dict[str, Any]: ...

    def capture_prompt(self, prompt: str, *, session_id: str, cwd: str) -> str | None: ...

    def close(self) -> None: ...


def memesh_home(env: Mapping[str, str]) -> Path:
    return Path(env.get("MEMESH_HOME") or Path.home() / ".memesh").expanduser()


def serve_record(env: Mapping[str, str]) -> dict[str, Any] | None:
    try:
        record = json.loads((memesh_home(env) / SERVE_RECORD).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _record_url(record: Mapping[str, Any]) -> str | None:
    port = record.get("port")
    if not isinstance(port, int):
        return None
    host = record.get("host")
    # A server bound to every address is reached on loopback from this machine.
    host = "127.0.0.1" if host in (None, "0.0.0.0", "localhost") else str(host)
    host = "[::1]" if host in ("::", "::1") else host
    return f"http://{host}:{port}"


def hook_payload(prompt: str, *, session_id: str, cwd: str) -> str:
    """The UserPromptSubmit hook's input, as Claude Code would send it."""
    return json.dumps(
        {
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
            "session_id": session_id or None,
            "cwd": cwd,
        }
    )


class HttpTransport:
    kind = "http"

    def __init__(self, env: Mapping[str, str]) -> None:
        record = serve_record(env)
        given = env.get("MEMESH_URL", "").strip()
        recorded = _record_url(record) if record else None
        self.base = (given or recorded or DEFAULT_URL).rstrip("/")
        self.token = env.get("MEMESH_TOKEN", "").strip() or None
        # The /_cli token only for the server that record describes: never sent elsewhere.
        same_server = record is not None and recorded is not None and self.base == recorded
        cli_token = record.get("token") if same_server and record else None
        loopback = urllib.parse.urlsplit(self.base).hostname in LOOPBACK_HOSTS
        self.cli_token = cli_token if isinstance(cli_token, str) and loopback else None
        # urllib would send even a loopback request through an http_proxy from the
        # environment (unless no_proxy names it): a proxy must never see the CLI token.
        handlers = [urllib.request.ProxyHandler({})] if loopback else []
        self._opener = urllib.request.build_opener(*handlers)

    def _post(self, path: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> Any:
        request = urllib.request.Request(
            self.base + path,
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json", **headers},
        )
        try:
            with self._opener.open(request, timeout=TIMEOUT_S) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:  # 4xx/5xx still carry memesh's envelope
            raw = exc.read()
        except (OSError, ValueError) as exc:
            raise MemeshCallError(
                "transport.unreachable", f"memesh at {self.base} did not answer: {exc}"
            ) from exc
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise MemeshCallError(
                "transport.bad-answer", f"memesh at {self.base} answered something not JSON"
            ) from exc

    def call(self, operation: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        answer = self._post(f"/v1/{operation}", payload, headers)
        if not isinstance(answer, dict) or "success" not in answer:
            raise MemeshCallError("transport.bad-answer", "the answer is not memesh's envelope")
        if not answer["success"]:
            raise MemeshCallError(
                str(answer.get("errorCode") or "unknown"), str(answer.get("error") or "")
            )
        data = answer.get("data")
        return data if isinstance(data, dict) else {"value": data}

    def capture_prompt(self, prompt: str, *, session_id: str, cwd: str) -> str | None:
        if self.cli_token is None:
            return None
        body = {
            "argv": ["hook", CAPTURE_EVENT, *HOOK_HOST_ARGS],
            "cwd": cwd,
            "stdin": hook_payload(prompt, session_id=session_id, cwd=cwd),
        }
        answer = self._post(CLI_PATH, body, {CLI_TOKEN_HEADER: self.cli_token})
        if not isinstance(answer, dict) or answer.get("exit") != 0:
            raise MemeshCallError("capture.failed", "memesh did not run the capture")
        return str(answer.get("stdout") or "")

    def close(self) -> None:
        pass


class InProcessTransport:
    kind = "in-process"
    _setup_lock = threading.Lock()

    def __init__(self) -> None:
        # memesh's own settings, whatever else this process has configured.
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memesh_site.settings")
        with self._setup_lock:
            import django

            django.setup()
            from core.db.schema import migrate_if_needed

            migrate_if_needed()  # a fresh MEMESH_HOME works from whichever process comes first

    def call(self, operation: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        from django.db import close_old_connections

        from api.envelope import failure_for
        from api.operations import OPERATIONS
        from graph.ops.kit.operation import CallContext

        op = OPERATIONS.get(operation)
        if op is None:
            raise MemeshCallError("route.not-found", f"memesh has no operation {operation!r}")
        # As a plain REST call: no project bound from this process's directory (HTTP's rule),
        # so both transports store and recall the same things.
        context = CallContext(source_host=SOURCE_HOST, binds_reads=False)
        # Hermes calls from its own threads, long after the last call: a connection broken or
        # past its age must be replaced before use and released after, as a request would.
        close_old_connections()
        try:
            return op.run(dict(payload), context)
        except Exception as exc:
            failure = failure_for(exc, where=f"hermes:{operation}")
            raise MemeshCallError(failure.error_code, failure.message) from exc
        finally:
            close_old_connections()

    def capture_prompt(self, prompt: str, *, session_id: str, cwd: str) -> str | None:
        from django.db import close_old_connections

        from api.cli.forward import MAX_STDIN_BYTES
        from api.hooks.dispatch import run_hook

        close_old_connections()
        try:
            payload = hook_payload(prompt, session_id=session_id, cwd=cwd)
            return run_hook(CAPTURE_EVENT, payload, limit=MAX_STDIN_BYTES, host=SOURCE_HOST)
        finally:
            close_old_connections()

    def close(self) -> None:
        from django.db import connections

        connections.close_all()


def memesh_importable() -> bool:
    """Whether memesh is installed in this Python environment (no import of it yet)."""
    from importlib.util import find_spec

    try:
        return all(find_spec(name) is not None for name in ("memesh_site", "graph", "django"))
    except (ImportError, ValueError):
        return False


def choose(env: Mapping[str, str]) -> Transport:
    """MEMESH_HERMES_MODE: `in-process`, `http`, or `auto` (the default): in process when
    memesh is importable here and no MEMESH_URL points elsewhere, else HTTP."""
    mode = env.get("MEMESH_HERMES_MODE", "auto").strip().lower() or "auto"
    if mode not in {"auto", "in-process", "http"}:
        raise MemeshCallError(
            "config.invalid", f"MEMESH_HERMES_MODE is {mode!r}: auto, in-process or http"
        )
    if mode == "in-process" or (
        mode == "auto" and not env.get("MEMESH_URL") and memesh_importable()
    ):
        return InProcessTransport()
    return HttpTransport(env)
