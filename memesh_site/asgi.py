"""ASGI entry point: Django's WSGI handler in a thread pool.

Django's own ASGI handler runs every sync view on one shared thread; a2wsgi's pool lets
requests proceed in parallel (SQLite WAL serves concurrent readers).
"""

import os

from a2wsgi import WSGIMiddleware

from memesh_site.env import envint

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memesh_site.settings")

from memesh_site.wsgi import application as wsgi_application

# Django's responses are iterables of bytes; its stubs type __call__ as returning a response.
application = WSGIMiddleware(
    wsgi_application,  # type: ignore[arg-type]
    workers=envint("MEMESH_HTTP_THREADS", 8),
)
