"""memesh settings: one module, driven by MEMESH_* environment variables (docs/configuration.md).

Every environment variable memesh reads is read here, once, through the typed readers of
core/env.py (a bad value stops the process with its name); other modules read
`django.conf.settings`. The exceptions are named where they are read: DJANGO_SETTINGS_MODULE
(before settings exist), and what `memesh serve` hands to the application it starts after this
module has loaded (MEMESH_SERVE_LISTENER, MEMESH_SERVE_PID, MEMESH_HTTP_WORKERS).
"""

from __future__ import annotations

from pathlib import Path

from core import paths, version
from core.env import (
    envbool,
    envbool_or_none,
    envfloat,
    envfloat_or_none,
    envint,
    envint_or_none,
    envint_within,
    envnames,
    envpath,
    envsecret,
    envstr,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VERSION = version.VERSION

# Where memesh keeps its data (core/paths.py): MEMESH_HOME (0700) holds the database,
# config.json (core/config_store.py), the signing key and the remote token.
MEMESH_HOME = envpath("MEMESH_HOME", paths.default_home())
# In a home shared with the original MeMesh, memesh's own file has a name of its own
# (core/paths.py's `own_file`); an explicit MEMESH_DB_PATH is taken as given, and refused
# when it is not memesh's (core/db/base.py).
MEMESH_DB_PATH = envpath("MEMESH_DB_PATH", paths.own_file(MEMESH_HOME, paths.DB_FILENAME))
# A team server's database (docs/team-server-design.md): when set, every table is on this
# PostgreSQL (with pgvector) instead of the SQLite file, and MEMESH_DB_PATH is not used. A
# secret: it may carry the password, which no message or report repeats.
MEMESH_DATABASE_URL = envsecret("MEMESH_DATABASE_URL").strip()

# Where the agent hosts keep their configuration and session transcripts, read as each host
# reads it: `memesh setup` writes there and `memesh doctor` checks it (hosts/); the hooks and
# transcript mining read Claude Code's sessions under CLAUDE_CONFIG_DIR/projects/
# (core/transcripts). The hosts' own variables, not memesh's: Claude Code keeps `.claude.json`
# inside CLAUDE_CONFIG_DIR when that is set, else in the home folder.
_claude_config_dir = envstr("CLAUDE_CONFIG_DIR", "")
CLAUDE_CONFIG_DIR = (
    Path(_claude_config_dir).expanduser() if _claude_config_dir else Path.home() / ".claude"
)
CLAUDE_STATE_FILE = (
    CLAUDE_CONFIG_DIR / ".claude.json" if _claude_config_dir else Path.home() / ".claude.json"
)
CODEX_HOME = envpath("CODEX_HOME", Path.home() / ".codex")
# basic-memory's folder, found as basic-memory finds it, for the project names its
# config.json gives the folders `memesh import --from basic-memory` reads.
_xdg_config_home = envstr("XDG_CONFIG_HOME", "")
BASIC_MEMORY_CONFIG_DIR = envpath(
    "BASIC_MEMORY_CONFIG_DIR",
    Path(_xdg_config_home) / "basic-memory" if _xdg_config_home else Path.home() / ".basic-memory",
)
# The MEMESH_* variables set where memesh runs, by name: Codex hands an MCP server a
# whitelisted environment, so `memesh setup codex` lists these in the server's `env_vars`.
MEMESH_ENV_NAMES = envnames("MEMESH_")
# Gemini CLI keeps its `.gemini` folder in GEMINI_CLI_HOME when that is set, else in the home.
GEMINI_DIR = envpath("GEMINI_CLI_HOME", Path.home()) / ".gemini"
CURSOR_DIR = Path.home() / ".cursor"

DEBUG = envbool("MEMESH_DEBUG", False)
SECRET_KEY = envstr("MEMESH_SECRET_KEY", "") or paths.stored_secret_key(MEMESH_HOME)

# Host-header checking keeps a loopback server safe from DNS rebinding: a web page cannot
# point its own host name at 127.0.0.1 and read memories through the browser.
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]", "testserver"] + [
    h.strip() for h in envstr("MEMESH_ALLOWED_HOSTS", "").split(",") if h.strip()
]

INSTALLED_APPS = [
    # The review UI (DESIGN §9): admin, sessions and messages for logged-in reviewers.
    # SimpleAdminConfig: the admin modules are discovered by memesh_site/urls.py, which only
    # the web server and the URL checks load, so a CLI process does not import them (and the
    # services and schemas they pull in) at start-up.
    "django.contrib.admin.apps.SimpleAdminConfig",
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "rest_framework",
    "graph.apps.GraphConfig",
    "proposals.apps.ProposalsConfig",
    "dream.apps.DreamConfig",
    "review.apps.ReviewConfig",
    "messaging.apps.MessagingConfig",
    "api.apps.ApiConfig",
    "api.cli.apps.CliConfig",
    "api.cli.installation.apps.InstallationConfig",
    "api.hooks.apps.HooksConfig",
    "api.mcp_server.apps.McpServerConfig",
    "dashboard.apps.DashboardConfig",
]

MIDDLEWARE = [
    # Outermost: nosniff / frame DENY / no-referrer on every response, errors included.
    "api.rest.middleware.SecurityHeadersMiddleware",
    "api.rest.middleware.BodySizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.common.CommonMiddleware",
    # The review UI (admin, /review/) is a session-cookie site. The REST API is untouched:
    # sessions and request.user load lazily (a /v1 request never reads them, so no query and
    # no Set-Cookie), DRF's APIView and the plain views in api/ are csrf_exempt, and htmx
    # detection only reads headers.
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "memesh_site.urls"
WSGI_APPLICATION = "memesh_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

DATABASES = {
    "default": {
        # pysqlite3 (or sqlean) with sqlite-vec loaded on every connection: core/db.
        "ENGINE": "core.db",
        "NAME": str(MEMESH_DB_PATH),
        # Keep each server thread's connection: opening one loads sqlite-vec and sets the
        # PRAGMAs, which cost more than a whole recall.
        "CONN_MAX_AGE": None,
        "OPTIONS": {
            # Writers take the lock at BEGIN; a DEFERRED read-then-write transaction cannot
            # wait for the lock and fails with "database is locked" (DESIGN §10).
            "transaction_mode": "IMMEDIATE",
            "timeout": envint("MEMESH_BUSY_TIMEOUT_SECONDS", 30),
        },
        "TEST": {"NAME": None},
    }
}
if MEMESH_DATABASE_URL:
    from core.db.postgres.url import database_settings

    DATABASES = {"default": database_settings(MEMESH_DATABASE_URL, conn_max_age=None)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The body limit is enforced by api.rest.middleware with the reference's 413 envelope; Django's own
# limit is lifted so it never answers first with an HTML 400.
MEMESH_MAX_BODY_BYTES = 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = None

# GET /v1/update-status asks this URL (a JSON document naming the latest version, PyPI's
# JSON API format: {"info": {"version": ...}}) with a 3 s timeout. Unset: no check is made and
# the answer says so.
MEMESH_UPDATE_URL = envstr("MEMESH_UPDATE_URL", "").strip()

REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["api.rest.parsers.AnyContentJSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "api.rest.negotiation.JSONOnly",
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
    "EXCEPTION_HANDLER": "api.rest.errors.drf_exception_handler",
}

# Celery (DESIGN §10): the embedded default needs no service — a filesystem broker under
# MEMESH_HOME, polled every 0.1 s. `memesh serve` runs a worker. Tasks record what they did in
# the graph itself (vectors, markers), so no result backend is kept: django-celery-results
# would import Celery into every process, `memesh mcp`'s handshake included (~0.15 s).
CELERY_BROKER_URL = envstr("MEMESH_CELERY_BROKER", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    _queue = paths.celery_broker_dir(MEMESH_HOME)
    # kombu's filesystem transport with atomic message files (core/broker.py says why).
    CELERY_BROKER_TRANSPORT = "core.broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # One folder in and out: producers and the worker share it.
        "data_folder_in": str(_queue / "queue"),
        "data_folder_out": str(_queue / "queue"),
        "processed_folder": str(_queue / "processed"),
        "control_folder": str(_queue / "control"),
        "store_processed": False,
        "polling_interval": 0.1,
    }
CELERY_TASK_ALWAYS_EAGER = envbool("MEMESH_CELERY_EAGER", False)
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Writes within this window share one embedding task (graph/ops/kit/writes.py: request_embedding).
MEMESH_EMBED_DEBOUNCE_SECONDS = float(envstr("MEMESH_EMBED_DEBOUNCE_SECONDS", "0.5"))

# Automatic dreams (dream/due.py, docs/dream.md): how often the worker's schedule
# asks whether a dream is due, in seconds (0: no schedule; the Stop hook still asks).
MEMESH_DREAM_CHECK_SECONDS = envint("MEMESH_DREAM_CHECK_SECONDS", 3600)
# The scheduled-mining switch: set, it wins over config.json's `transcriptMining`.
MEMESH_TRANSCRIPT_MINING = envbool_or_none("MEMESH_TRANSCRIPT_MINING")

# The SQLite driver and extension (core/db): MEMESH_SQLITE_DRIVER=sqlean forces the
# fallback driver; MEMESH_SQLITE_VEC_PATH loads another build of sqlite-vec.
MEMESH_SQLITE_DRIVER = envstr("MEMESH_SQLITE_DRIVER", "")
MEMESH_SQLITE_VEC_PATH = envstr("MEMESH_SQLITE_VEC_PATH", "")

# The embedder (graph/embedding/config.py): each of these, when set, wins over config.json's
# `embedder` section. "" / None: not set.
MEMESH_EMBEDDER = envstr("MEMESH_EMBEDDER", "")
MEMESH_EMBEDDER_MODEL = envstr("MEMESH_EMBEDDER_MODEL", "")
MEMESH_EMBEDDER_BASE_URL = envstr("MEMESH_EMBEDDER_BASE_URL", "")
MEMESH_EMBEDDER_API_KEY = envstr("MEMESH_EMBEDDER_API_KEY", "")
OPENAI_API_KEY = envstr("OPENAI_API_KEY", "")  # the openai embedder's key of last resort
MEMESH_EMBEDDER_DIMENSIONS = envint_or_none("MEMESH_EMBEDDER_DIMENSIONS")
MEMESH_EMBEDDER_TIMEOUT = envfloat_or_none("MEMESH_EMBEDDER_TIMEOUT")
# onnxruntime threads of the local embedder (0: onnxruntime's own choice).
MEMESH_EMBEDDER_THREADS = envint("MEMESH_EMBEDDER_THREADS", 0)

# LLM providers (dream/llm/providers.py): the read timeout of one attempt (≤ 0: the
# default), and the endpoints used when config.json names none.
MEMESH_LLM_TIMEOUT_SECONDS = envfloat("MEMESH_LLM_TIMEOUT_SECONDS", 60.0)
MEMESH_ANTHROPIC_BASE_URL = envstr("MEMESH_ANTHROPIC_BASE_URL", "")
MEMESH_OPENAI_BASE_URL = envstr("MEMESH_OPENAI_BASE_URL", "")
OLLAMA_HOST = envstr("OLLAMA_HOST", "")

# `memesh serve` (memesh_site/asgi.py, remote_auth.py, rate_limit.py): request threads per
# process; the bearer token of a remote listener (else MEMESH_HOME/remote-token); requests a
# minute per client address (None: only a remote listener is limited, by default).
MEMESH_HTTP_THREADS = envint("MEMESH_HTTP_THREADS", 8)
# `memesh serve`'s flag defaults: where it listens, whether a non-loopback host is allowed,
# how many server processes share the port, and whether it starts the background worker.
MEMESH_HTTP_HOST = envstr("MEMESH_HTTP_HOST", "127.0.0.1")
MEMESH_HTTP_PORT = envint("MEMESH_HTTP_PORT", 3737)
MEMESH_HTTP_ALLOW_REMOTE = envbool("MEMESH_HTTP_ALLOW_REMOTE", False)
MEMESH_HTTP_WORKERS = envint("MEMESH_HTTP_WORKERS", 2)
MEMESH_WORKER = envbool("MEMESH_WORKER", True)
# How much lower the background worker's CPU priority is than the server's (Unix nice
# increment, 0-19): embedding is background work, and on a small machine it competes with the
# requests a person or an agent is waiting for. 0 leaves it as started.
MEMESH_WORKER_NICENESS = envint_within("MEMESH_WORKER_NICENESS", 10, 0, 19)
# The longest the worker's local embedder waits, before each model call, for a moment with no
# request at the server (core/request_activity.py); 0 never waits.
MEMESH_WORKER_YIELD_SECONDS = envfloat("MEMESH_WORKER_YIELD_SECONDS", 0.5)
# onnxruntime threads of the worker's local embedder when MEMESH_EMBEDDER_THREADS is unset
# (0: the server's default, min(2, CPUs)). 1 leaves a core to the requests while they arrive,
# at the cost of a slower backlog on an otherwise idle machine (docs/performance-notes.md).
MEMESH_WORKER_EMBEDDER_THREADS = envint_within("MEMESH_WORKER_EMBEDDER_THREADS", 0, 0, 64)
# onnxruntime threads of a server process's local embedder when MEMESH_EMBEDDER_THREADS is
# unset (0: min(2, CPUs)). A server embeds one short query per recall, where a second thread
# costs more CPU than it saves time, and waits for a core the worker or the other requests
# hold (docs/performance-notes.md).
MEMESH_SERVER_EMBEDDER_THREADS = envint_within("MEMESH_SERVER_EMBEDDER_THREADS", 1, 0, 64)
MEMESH_REMOTE_TOKEN = envstr("MEMESH_REMOTE_TOKEN", "")
# The peer-shaped compatibility surface (docs/api.md, "Peer compatibility"): `memory_*` MCP
# tools and /api/v1/memories routes. Off by default; the config key `peerApi` turns it on too.
MEMESH_PEER_API = envbool("MEMESH_PEER_API", False)
MEMESH_RATE_LIMIT_PER_MINUTE = envfloat_or_none("MEMESH_RATE_LIMIT_PER_MINUTE")

# The capture hooks (`memesh hook <event>`, api/hooks/): MEMESH_AUTO_CAPTURE=false stops every
# hook write, =true allows them whatever config.json says; unset, the `autoCapture` key of
# config.json decides (graph/capture/capture.py), and capture is on by default.
MEMESH_AUTO_CAPTURE = envbool_or_none("MEMESH_AUTO_CAPTURE")
# Who this session is to other agents (messaging/, docs/messages.md): the principal id that
# `memesh mcp` registers under, the CLI sends and polls as, and the hooks show waiting
# messages for. Checked where it is used, never here: an invalid id is refused with a
# message, not a settings failure.
MEMESH_RECIPIENT = envstr("MEMESH_RECIPIENT", "")
# A `memesh mcp` process also runs the short CLI commands and hooks of its home while no
# `memesh serve` does (api/cli/host.py): a session's hooks then skip Django's start-up.
MEMESH_MCP_RUNS_CLI = envbool("MEMESH_MCP_RUNS_CLI", True)

# `memesh createreviewer`'s password when --password is not given.
MEMESH_REVIEWER_PASSWORD = envsecret("MEMESH_REVIEWER_PASSWORD")

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"

# The review UI (admin and /review/, docs/review.md): sessions are stored in the database,
# the cookie is HttpOnly and SameSite=Lax, and CSRF protects every form.
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "proposals:queue"
LOGOUT_REDIRECT_URL = "login"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # stderr only: stdout carries the MCP protocol in `memesh mcp`.
    "handlers": {"stderr": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr"}},
    "root": {"handlers": ["stderr"], "level": envstr("MEMESH_LOG_LEVEL", "WARNING")},
    # A foreign Host header already gets a 400 envelope; a traceback per probe is noise.
    "loggers": {
        "django.security.DisallowedHost": {"handlers": [], "propagate": False},
        # kombu warns that filesystem:// has no host name, on every connection.
        "kombu.connection": {"level": "ERROR"},
    },
}
