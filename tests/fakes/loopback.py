"""What every fake server of the suite shares: an HTTP server on a free loopback port, run on
a daemon thread, started and stopped by hand or as a context manager.

A subclass names its request handler class; each request's handler reaches the fake as
`self.fake`. `_stopping` is set at stop, so a handler waiting out a scripted delay wakes.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self


class LoopbackServer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        handler = type("_BoundHandler", (self.handler_class(),), {"fake": self})
        self._stopping.clear()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"{type(self).__name__}:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
