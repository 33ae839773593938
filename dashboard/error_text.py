"""The dashboard's words for a failure: one sentence per stable errorCode.

The reference makes `errorCode` the contract and the English `error` text rewordable, and says
the dashboard translates known codes for its reader; this table is that translation. A code
missing here falls back to a generic sentence (tests/unit/test_error_text.py keeps every code
the server can answer with in the table). The probe codes of POST /v1/config/test travel
inside a success (`valid: false`), so they have their own table.
"""

from __future__ import annotations

ERROR_SENTENCES: dict[str, str] = {
    "auth.missing-bearer": "This server needs a bearer token, and the request carried none.",
    "auth.invalid-token": "The bearer token was not accepted.",
    "auth.not-configured": "The server is bound for remote access but has no token set up.",
    "validation.bad-body": "Something in the form is not valid; check the fields and try again.",
    "validation.bad-param": "A filter or parameter has a value memesh cannot use.",
    "route.retired": "That feature was retired; the message names what replaces it.",
    "route.not-found": "There is no such page.",
    "route.method-not-allowed": "That action cannot be done this way.",
    "resource.not-found": "That memory (or item) does not exist, or no longer does.",
    "resource.name-in-other-project": "That name belongs to a memory of another project.",
    "payload.too-large": "What you sent is larger than the 1 MB limit.",
    "operation.failed": "The action was refused; the details say why.",
    "llm.not-configured": "This needs an LLM provider; add one under Settings first.",
    "trust.source-required": "Making this a fact needs the source it was observed in.",
    "trust.observe-required": "Trust can only be raised by observing the memory with a source.",
    "rate.limited": "Too many requests in a short time; wait a moment and try again.",
    "request.bad-host": "The server does not answer to this host name.",
    "request.length-required": "The request did not say how long its body is.",
    "server.internal": "Something went wrong inside memesh; the server log has the details.",
    "storage.busy": "The database is busy with another writer; try again in a moment.",
    "storage.read-only": "The database is read-only, so nothing can be changed now.",
    "storage.full": "The disk holding the database is full; nothing was written.",
    "storage.io-error": "The disk holding the database failed to read or write.",
    "storage.cannot-open": "The database file cannot be opened.",
    "storage.foreign-database": "The database file belongs to another program, so memesh "
    "leaves it alone.",
    "storage.bad-url": "The database URL cannot be read; the details say which part is wrong.",
    "storage.unavailable": "The database server cannot be reached now; try again in a moment.",
    "storage.no-pgvector": "The PostgreSQL database has no pgvector extension, which memesh needs.",
    "storage.unsupported-server": "The database server's version is older than memesh supports.",
    # `memesh import --from FORMAT` (graph/ops/foreign/errors.py).
    "import.unknown-format": "That format cannot be imported; the details list the ones that can.",
    "import.source-not-found": "The file or folder to import from does not exist.",
    "import.wrong-format": "The file is not in the format named, so nothing was imported.",
    "import.bad-record": "A record in the source cannot be read; the details name it.",
    # The CLI's own (`memesh reindex`, `memesh setup`), for a page that runs the same service.
    "reindex.refused": "A reindex cannot run now; the details say why.",
    "db.copy-source": "The copy needs a SQLite home to copy from and a PostgreSQL URL to copy to.",
    "db.copy-target-not-empty": "The target database already holds memories; copy into an "
    "empty one.",
    "db.copy-interrupted": "The copy stopped part-way; run it again to resume where it stopped.",
    "db.copy-unequal": "The copy does not match its source; the details name the table.",
    "reindex.retired-flag": "That reindex option was retired; the details name its successor.",
    "setup.no-memesh-command": "No memesh command was found to write into the host's setup.",
    "setup.invalid-config": "The host's configuration file is not valid, so it was left alone.",
    "setup.config-changed": "The host's configuration changed while it was being edited.",
    "setup.cannot-write": "The host's configuration file cannot be written.",
    "setup.original-memesh-server": "The host's memesh server entry is the original MeMesh's, "
    "so it was left alone.",
    # Agents talking to each other (messaging/errors.py).
    "validation.bad-recipient": "That recipient id is not usable: too long or shaped like a path.",
    "recipient_unavailable": "No live agent is registered under that recipient to deliver to.",
    "native_message_too_large": "The message is too large to hand to a running session.",
    "message.payload-too-large": "The message's content is over the 64 KiB limit.",
    "intended_for_other_session": "That message is meant for another session of the agent.",
    # The agents' review tools (proposals/errors.py).
    "review.human-only": "Only a person accepts or rejects this, in the review page or the CLI.",
    "work_package.no-workspace-root": "No workspace folder with agent sessions was given.",
    "work_package.ambiguous-workspace-root": (
        "More than one workspace folder holds agent sessions; name one."
    ),
    "work_package.stale": "The package's sources changed since it was prepared; prepare it again.",
    "work_package.workspace-mismatch": "The result comes from another workspace than the package.",
    "work_package.secret-in-result": "The result looks like it holds a secret, so it was refused.",
}

UNKNOWN_ERROR = "The action failed."

PROBE_SENTENCES: dict[str, str] = {
    "auth": "The API key is missing or the provider rejected it.",
    "network": "The provider could not be reached (DNS, refused connection or timeout).",
    "no_models": "The provider answered but offers no usable models.",
    "bad_host": "That Ollama host is not allowed: it must be on this machine (loopback).",
    "unknown": "The test failed for a reason memesh could not classify.",
}
PROBE_HTTP_PREFIX = "http_"


def error_sentence(code: str) -> str:
    """The sentence for an errorCode, or a generic one for a code this table does not know."""
    return ERROR_SENTENCES.get(code, UNKNOWN_ERROR)


def probe_sentence(code: str | None) -> str:
    """The sentence for a config-test outcome's errorCode (`http_<status>` included)."""
    if code and code.startswith(PROBE_HTTP_PREFIX):
        return f"The provider answered with HTTP status {code[len(PROBE_HTTP_PREFIX) :]}."
    return PROBE_SENTENCES.get(code or "unknown", PROBE_SENTENCES["unknown"])
