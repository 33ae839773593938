"""Hostile input against real processes: every operation's input over REST on a real
`memesh serve` and as raw lines to a real `memesh mcp`, and deep nesting on every transport.

Every generated input is invalid by construction. One value — a field's, an unknown key's or
the whole input's — is one its schema cannot accept: JSON nested past MAX_JSON_DEPTH, a lone
surrogate, an integer past 64 bits or out of range, another JSON type, a required field's
null, a number nothing can read (NaN, a 5,000-digit integer); the rest of the input is one of
the operation's own examples. So each must be refused — REST: a 4xx failure envelope with a
stable errorCode; stdio: a JSON-RPC error, or an `isError` result carrying that envelope (an
import may instead report its one bad entry in `errors`, bad_bundles says why) — the process
must answer the next request, and the database must hold exactly what it held (seeded
memories the examples name, compared row for row).

Both processes share one MEMESH_HOME, so one database holds what either could change.
"""

from __future__ import annotations

import itertools
import json
import math
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, assume, example, given, note, settings
from hypothesis import strategies as st

# Every operation the transports serve: the agents app's `message` too (api/operations.py).
from api.operations import OPERATIONS
from api.rest.openapi import ERROR_CODES
from core.json_limits import MAX_JSON_DEPTH, nesting_depth
from graph.ops.bundle.entry import MAX_HISTORY_DEPTH
from graph.ops.bundle.importer import BundleEntry
from graph.ops.kit.operation import Operation
from tests.processes import EXIT_DEADLINE, StdioServer, read_rows, serving

pytestmark = pytest.mark.slow  # two server processes

ENV = {"MEMESH_EMBEDDER": "none", "MEMESH_WORKER": "false"}
# Memories the operations' examples name (forget's, pin's), so that an input wrongly accepted
# would change something the fingerprint sees.
SEEDS: list[dict[str, Any]] = [
    OPERATIONS["remember"].examples[0],
    {"name": "auth-architecture-decision", "type": "note", "observations": ["JWT, RS256"]},
    {
        "name": "seed-note",
        "type": "note",
        "observations": ["a plain fact"],
        "tags": ["project:myapp"],
        "relations": [{"to": "auth-decision", "type": "relates_to"}],
    },
]
TABLES = ("graph_entity", "graph_observation", "graph_tag", "graph_relation")
EXAMPLES = 80  # per transport: well under half a minute each
Check = Callable[[tuple[Any, Any, bool]], None]


# --- values no schema accepts ------------------------------------------------------------------


@dataclass(frozen=True)
class Raw:
    """Text put into an input's JSON as it is: what json.dumps cannot write (nesting past its
    recursion limit, a 5,000-digit integer) or would not (NaN as a hostile value)."""

    text: str


def encode(value: object) -> str:
    """`value` as JSON text in ASCII (a lone surrogate travels as its `\\ud800` escape), each
    Raw's text in its place."""
    token = uuid.uuid4().hex
    raws: list[str] = []

    def placeholder(item: object) -> str:
        if not isinstance(item, Raw):
            raise TypeError(f"cannot encode {item!r}")
        raws.append(item.text)
        return f"{token}-{len(raws) - 1}"

    text = json.dumps(value, ensure_ascii=True, default=placeholder)
    for n, raw in enumerate(raws):
        text = text.replace(f'"{token}-{n}"', raw)
    return text


def nested(depth: int, kind: str) -> Raw:
    if kind == "arrays":
        return Raw("[" * depth + "]" * depth)
    if kind == "objects":
        return Raw('{"k":' * depth + "0" + "}" * depth)
    half = depth // 2 + 1
    return Raw('[{"k":' * half + "[]" + "}]" * half)


too_deep = st.builds(
    nested,
    st.integers(MAX_JSON_DEPTH + 1, 5_000),
    st.sampled_from(["arrays", "objects", "mixed"]),
)
# NaN and Infinity are not JSON; a 5,001-digit integer is, but past what Python's int() reads.
unreadable_numbers = st.sampled_from(
    [Raw("NaN"), Raw("Infinity"), Raw("-Infinity"), Raw("1" + "0" * 5_000)]
)
past_64_bits = st.integers(2**63, 2**256) | st.integers(-(2**256), -(2**63) - 1)
lone_surrogate = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
surrogate_text = st.builds(
    lambda before, surrogate, after: before + surrogate + after,
    st.text(max_size=6),
    lone_surrogate,
    st.text(max_size=6),
)
fractions = st.floats(allow_nan=False, allow_infinity=False).filter(
    lambda f: not f.is_integer()
) | st.sampled_from([Raw("1e400"), Raw("-1e400")])  # JSON, but past any float
scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=8)


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[1]]
    return schema


def refused(
    schema: dict[str, Any], defs: dict[str, Any], *, required: bool
) -> st.SearchStrategy[Any]:
    """Values `schema` (the subset of JSON Schema the operations' models produce) rejects.
    null only where the field is `required`: MCP reads a top-level null as "not given"."""
    branches = [_resolve(b, defs) for b in _resolve(schema, defs).get("anyOf", [schema])]
    kinds = {branch.get("type") for branch in branches}
    options: list[st.SearchStrategy[Any]] = []  # of another JSON type
    if "string" not in kinds:
        options.append(st.text(max_size=8))
    if "integer" not in kinds:
        options.append(past_64_bits | st.integers(-5, 5))
    options.append(fractions)  # no field takes a number with a fraction
    if "boolean" not in kinds:
        options.append(st.booleans())
    if "array" not in kinds:
        options.append(st.lists(scalars, max_size=3))
    if "object" not in kinds:
        options.append(st.dictionaries(st.text(max_size=5), scalars, max_size=3))
    if required and "null" not in kinds:
        options.append(st.none())
    own_type = [strategy for branch in branches for strategy in _refused_of_its_type(branch, defs)]
    # Three kinds, equally likely whatever the number of ways each has.
    kinds_of_refusal = [too_deep | unreadable_numbers, st.one_of(options)]
    return st.one_of([*kinds_of_refusal, st.one_of(own_type)] if own_type else kinds_of_refusal)


def _refused_of_its_type(schema: dict[str, Any], defs: dict[str, Any]) -> list[Any]:
    """Values of `schema`'s own JSON type that it still rejects."""
    kind = schema.get("type")
    out: list[st.SearchStrategy[Any]] = []
    if kind == "string":
        out.append(surrogate_text)  # every text field refuses one (graph/ops/kit/fields.py)
        if "enum" in schema:
            allowed = set(schema["enum"])
            out.append(st.text(max_size=12).filter(lambda s: s not in allowed))
        if schema.get("minLength", 0) >= 1:
            out.append(st.just(""))
        if schema.get("maxLength", math.inf) <= 10_000:
            out.append(st.just("x" * (schema["maxLength"] + 1)))
    elif kind == "integer":
        if "minimum" in schema:
            out.append(st.integers(-(2**256), schema["minimum"] - 1))
        if "maximum" in schema:
            out.append(st.integers(schema["maximum"] + 1, 2**256))
    elif kind == "array" and "items" in schema:
        out.append(st.lists(refused(schema["items"], defs, required=True), min_size=1, max_size=2))
    elif kind == "object" and "properties" in schema:
        properties = schema["properties"]
        out.append(
            st.sampled_from(sorted(properties)).flatmap(
                lambda key: st.fixed_dictionaries(
                    {key: refused(properties[key], defs, required=True)}
                )
            )
        )
    elif kind == "object":
        # Free-form (import's bundle, an entry's kept versions): what it holds is stored as it
        # came, so it must be storable text throughout. A bundle also needs `entities`, which
        # these lack; bad_bundles() gives it one.
        out.append(st.dictionaries(surrogate_text, scalars, min_size=1, max_size=2))
        out.append(st.fixed_dictionaries({"k": st.lists(surrogate_text, min_size=1, max_size=2)}))
    return out


ENTRY = {"name": "hostile-entry", "type": "note", "observations": ["never stored"]}


def bad_bundles() -> st.SearchStrategy[tuple[dict[str, Any], bool]]:
    """import's `data` with one flaw, and whether import may report it instead of refusing the
    call: `entities` that is no array is refused; an entry it must refuse is reported in
    `errors` while the call succeeds (a bundle's other entries would still import)."""
    schema = BundleEntry.model_json_schema()
    defs = schema.get("$defs", {})
    properties: dict[str, Any] = schema["properties"]
    bad_entry = st.sampled_from(sorted(properties)).flatmap(
        lambda key: refused(properties[key], defs, required=True).map(
            lambda value: {**ENTRY, key: value}
        )
    )
    no_array = refused({"type": "array"}, defs, required=True)
    return st.one_of(
        no_array.map(lambda entities: ({"entities": entities}, False)),
        (bad_entry | scalars | st.lists(scalars, max_size=2)).map(
            lambda entry: ({"entities": [entry]}, True)
        ),
    )


def hostile_inputs(
    op: Operation, *, whole_body: bool = True
) -> st.SearchStrategy[tuple[Any, bool]]:
    """Inputs to `op` with one value it must refuse, each with whether it may be reported
    rather than refused (bad_bundles); `whole_body` adds inputs that are no object at all (a
    query string cannot carry those)."""
    schema = op.input_model.model_json_schema()
    defs = schema.get("$defs", {})
    properties: dict[str, Any] = schema["properties"]
    required = set(schema.get("required", []))
    examples = st.sampled_from(op.examples or [{}])
    bad_field = st.sampled_from(sorted(properties)).flatmap(
        lambda key: st.tuples(
            st.just(key), refused(properties[key], defs, required=key in required)
        )
    )
    unknown_key = (st.text(min_size=1, max_size=8) | surrogate_text).filter(
        lambda key: key not in properties
    )
    options = [
        # An operation that takes no input (stats, projects) has no field to spoil.
        *(
            [st.builds(lambda base, item: {**base, item[0]: item[1]}, examples, bad_field)]
            if properties
            else []
        ),
        # Not null: MCP reads a top-level null as "not given", so a null unknown key is none.
        st.builds(
            lambda base, key, value: {**base, key: value},
            examples,
            unknown_key,
            scalars.filter(lambda v: v is not None),
        ),
    ]
    if whole_body:  # not null: an MCP call's null arguments are no arguments, a valid call
        options.append(
            st.one_of(too_deep, unreadable_numbers, st.lists(scalars, max_size=3), st.text())
        )
    refusals = st.one_of(options).map(lambda payload: (payload, False))
    if op is not OPERATIONS["import"]:
        return refusals
    bundles = st.builds(
        lambda base, bundle: ({**base, "data": bundle[0]}, bundle[1]), examples, bad_bundles()
    )
    return refusals | bundles


def calls(ops: list[Operation], *, query_strings: bool) -> st.SearchStrategy[Any]:
    by_name = {
        op.name: hostile_inputs(op, whole_body=not (query_strings and op.method == "GET"))
        for op in ops
    }
    return st.sampled_from(sorted(by_name)).flatmap(
        lambda name: by_name[name].map(lambda call: (OPERATIONS[name], *call))
    )


# Inputs that once answered 500, run first on every run.
REGRESSIONS: list[tuple[str, dict[str, Any], bool]] = [
    ("recall", {"query": nested(2_000, "arrays")}, False),  # the RecursionError
    (
        "import",
        {"data": {"entities": [{**ENTRY, "name": "\ud800"}]}, "merge_strategy": "skip"},
        True,
    ),
    (
        "import",
        {
            "data": {"entities": [{**ENTRY, "replaced_history": [{"observations": ["\udfff"]}]}]},
            "merge_strategy": "skip",
        },
        True,
    ),
    (
        "import",
        {
            "data": {"entities": [{**ENTRY, "replaced_history": [{"\ud800": 1}]}]},
            "merge_strategy": "skip",
        },
        True,
    ),
]


def fuzzed(ops: list[Operation], *, query_strings: bool) -> Callable[[Check], Check]:
    """The property-test decorators: generated calls to `ops`, the regressions first."""

    def decorate(check: Check) -> Check:
        for name, payload, may_report in REGRESSIONS:
            if OPERATIONS[name] in ops:
                check = example((OPERATIONS[name], payload, may_report))(check)
        return settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )(given(calls(ops, query_strings=query_strings))(check))

    return decorate


# --- the processes -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rest(home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`memesh serve` on the module's home (conftest), seeded, and checked afterwards for a
    traceback in its output."""
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with serving(home, log, "--no-worker", **ENV) as base:
        for seed in SEEDS:
            response = httpx.post(f"{base}/v1/remember", json=seed, timeout=30)
            assert response.status_code == 200, response.text
        yield base
    assert "Traceback" not in log.read_text(errors="replace")


@pytest.fixture(scope="module")
def stdio(rest: str, home: Path) -> Iterator[StdioServer]:
    # Started once serve has migrated and seeded the database they share.
    server = StdioServer(home, **ENV)
    try:
        assert server.initialize("hostile-input")["result"]
        yield server
        code, stderr = server.close()
        assert code == 0, stderr
        assert "Traceback" not in stderr
    finally:
        server.kill()


def fingerprint(home: Path) -> dict[str, list[tuple]]:
    """Every row of the graph's tables, read from outside the servers."""
    db = home / "knowledge-graph.db"
    return {table: read_rows(db, f"SELECT * FROM {table} ORDER BY id") for table in TABLES}


def assert_reported(result: dict[str, Any]) -> None:
    """An import that stored nothing and said why."""
    assert result["errors"], result
    assert [result[k] for k in ("imported", "appended", "skipped", "relations")] == [0] * 4


def assert_failure_envelope(body: dict[str, Any]) -> None:
    assert body["success"] is False, body
    assert body["errorCode"] in ERROR_CODES, body
    assert body["errorCode"] != "server.internal", body
    assert isinstance(body["error"], str) and body["error"], body


# --- REST --------------------------------------------------------------------------------------


def _query_value(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, list):
        return ",".join(_query_value(v) for v in value)
    return encode(value)


def _text_field(op: Operation, key: str) -> bool:
    """Whether `op`'s input field `key` takes text (of any form: a pattern is checked after)."""
    schema = op.input_model.model_json_schema()
    defs = schema.get("$defs", {})
    field = schema["properties"].get(key)
    if field is None:
        return False
    branches = [_resolve(b, defs) for b in _resolve(field, defs).get("anyOf", [field])]
    return any(b.get("type") == "string" and "enum" not in b for b in branches)


def carried_as_text(op: Operation, payload: Any) -> bool:
    """A query string holds text only: a number, NaN or `true` sent to a field that takes
    free text arrives as valid text (`?project=NaN` names a project called NaN)."""
    return op.method == "GET" and any(
        not isinstance(v, str) and _text_field(op, k) for k, v in payload.items()
    )


def rest_call(base: str, op: Operation, payload: Any) -> httpx.Response:
    url = f"{base}/v1/{op.rest_route}"
    if op.method == "GET":
        # Percent-encoded by hand: a lone surrogate has no UTF-8 form httpx would write.
        query = "&".join(
            f"{quote(k.encode('utf-8', 'surrogatepass'))}="
            f"{quote(_query_value(v).encode('utf-8', 'surrogatepass'))}"
            for k, v in payload.items()
        )
        return httpx.get(f"{url}?{query}", timeout=30)
    headers = {"content-type": "application/json"}
    return httpx.post(url, content=encode(payload), headers=headers, timeout=30)


REST_OPERATIONS = [op for op in OPERATIONS.values() if op.rest]


def test_hostile_rest_input_is_a_4xx_envelope_and_changes_nothing(rest: str, home: Path) -> None:
    before = fingerprint(home)
    assert all(before[table] for table in ("graph_entity", "graph_observation"))

    @fuzzed(REST_OPERATIONS, query_strings=True)
    def check(call: tuple[Operation, Any, bool]) -> None:
        op, payload, may_report = call
        note(f"{op.name}: {encode(payload)[:300]}")
        # A query string's list is split on commas and its blank items dropped: a list of
        # blanks there is no list, and no list is a valid call.
        assume(op.method != "GET" or all(_query_value(v).strip(", ") for v in payload.values()))
        assume(not carried_as_text(op, payload))
        response = rest_call(rest, op, payload)
        assert response.headers["content-type"].startswith("application/json")
        if may_report and response.status_code == 200:
            assert_reported(response.json()["data"])
        else:
            assert 400 <= response.status_code < 500, (response.status_code, response.text)
            assert_failure_envelope(response.json())
        assert httpx.get(f"{rest}/v1/health", timeout=30).status_code == 200
        assert fingerprint(home) == before, (op.name, payload)

    check()


# --- MCP over stdio ------------------------------------------------------------------------------

TOOL_OPERATIONS = [op for op in OPERATIONS.values() if op.tool]


def assert_refused_over_mcp(answer: dict[str, Any], *, may_report: bool) -> None:
    """A JSON-RPC error, or a tool result flagged isError carrying the failure envelope (or,
    where `may_report`, an import result reporting what it did not store)."""
    if "error" in answer:
        assert isinstance(answer["error"]["code"], int), answer
        assert answer["error"]["message"], answer
        return
    result = answer["result"]
    text = json.loads(result["content"][0]["text"])
    if may_report and result["isError"] is False:
        assert_reported(text)
        return
    assert result["isError"] is True, answer
    assert_failure_envelope(text)


def test_hostile_tool_arguments_over_stdio_are_refused_and_change_nothing(
    stdio: StdioServer, home: Path
) -> None:
    before = fingerprint(home)
    assert all(before[table] for table in ("graph_entity", "graph_observation"))
    counter = itertools.count()

    @fuzzed(TOOL_OPERATIONS, query_strings=False)
    def check(call: tuple[Operation, Any, bool]) -> None:
        op, arguments, may_report = call
        note(f"{op.name}: {encode(arguments)[:300]}")
        n = next(counter)
        params = {"name": op.name, "arguments": arguments}
        stdio.send(
            encode({"jsonrpc": "2.0", "id": f"call-{n}", "method": "tools/call", "params": params})
        )
        # A line the server cannot read is answered with id null (JSON-RPC 2.0 §5).
        assert_refused_over_mcp(stdio.take_answer(f"call-{n}", None), may_report=may_report)
        assert stdio.request(f"ping-{n}", "ping") == {
            "jsonrpc": "2.0",
            "id": f"ping-{n}",
            "result": {},
        }
        assert fingerprint(home) == before, (op.name, arguments)

    check()


# --- deep nesting, transport by transport --------------------------------------------------------

DEEP_ARRAYS = "[" * 20_000 + "]" * 20_000  # the 20 kB line, twice over
DEEP_OBJECTS = '{"a":' * 10_000 + "1" + "}" * 10_000
POST_ROUTES = [
    *(op.rest_route for op in OPERATIONS.values() if op.rest and op.method == "POST"),
    "dream/run",
    "dream/proposals/1/reject",
    "config",
    "config/test",
]


@pytest.mark.parametrize("route", POST_ROUTES)
def test_a_body_nested_past_the_limit_is_a_400_naming_it_on_every_post_route(
    rest: str, home: Path, route: str
) -> None:
    before = fingerprint(home)
    bodies = [DEEP_ARRAYS, '{"query": ' + DEEP_OBJECTS + "}", "[" * 2_000 + "]" * 2_000]
    for body in bodies:
        response = httpx.post(
            f"{rest}/v1/{route}", content=body, headers={"content-type": "application/json"}
        )
        assert response.status_code == 400, response.text
        failure = response.json()
        assert failure["errorCode"] == "validation.bad-body", failure
        assert f"deeper than {MAX_JSON_DEPTH} levels" in failure["error"]
    assert fingerprint(home) == before


def _import_nested_to(depth: int) -> str:
    """An import body exactly `depth` levels deep: one entry whose kept version nests."""
    # body, data, entities, entry, replaced_history, then the version's own levels
    inner = depth - 5
    version = '{"v":' * (inner - 1) + "{}" + "}" * (inner - 1)
    entry = {
        "name": f"nested-{depth}",
        "type": "note",
        "observations": ["o"],
        "replaced_history": ["@"],
    }
    return json.dumps({"merge_strategy": "skip", "data": {"entities": [entry]}}).replace(
        '"@"', version
    )


def test_a_bundle_at_the_decoding_limit_is_read_and_its_entry_judged_by_its_own_bound(
    rest: str, home: Path
) -> None:
    """The decoder takes a body of exactly MAX_JSON_DEPTH levels and refuses one level more;
    inside, kept versions have their own, tighter bound (MAX_HISTORY_DEPTH): an entry past it
    is reported in `errors` and not stored, one within it is stored and exported back."""
    at_limit = _import_nested_to(MAX_JSON_DEPTH)
    assert nesting_depth(at_limit) == MAX_JSON_DEPTH
    # body, data, entities, entry, replaced_history hold the version; its own levels follow.
    within = _import_nested_to(MAX_HISTORY_DEPTH + 4)
    headers = {"content-type": "application/json"}

    judged = httpx.post(f"{rest}/v1/import", content=at_limit, headers=headers, timeout=30)
    refused_ = httpx.post(
        f"{rest}/v1/import",
        content=_import_nested_to(MAX_JSON_DEPTH + 1),
        headers=headers,
        timeout=30,
    )
    stored = httpx.post(f"{rest}/v1/import", content=within, headers=headers, timeout=30)

    assert judged.status_code == 200, judged.text
    assert judged.json()["data"]["imported"] == 0
    [error] = judged.json()["data"]["errors"]
    assert "replaced_history" in error and f"{MAX_HISTORY_DEPTH} levels" in error
    assert refused_.status_code == 400, refused_.text
    assert stored.status_code == 200, stored.text
    assert stored.json()["data"]["imported"] == 1, stored.text
    name = f"nested-{MAX_HISTORY_DEPTH + 4}"
    exported = httpx.post(f"{rest}/v1/export", json={}, timeout=30).json()["data"]
    names_ = [e["name"] for e in exported["entities"]]
    assert f"nested-{MAX_JSON_DEPTH}" not in names_
    entry = next(e for e in exported["entities"] if e["name"] == name)
    assert len(entry["replaced_history"]) == 1
    recalled = httpx.post(f"{rest}/v1/recall", json={"query": name}, timeout=30)
    assert recalled.status_code == 200, recalled.text
    # The server records the recall's access a second later (graph/ops/recall/access.py): wait
    # for it, so that the tests after this one find the database settled.
    db, deadline = home / "knowledge-graph.db", time.monotonic() + EXIT_DEADLINE
    count_sql = "SELECT access_count FROM graph_entity WHERE name = ?"
    while read_rows(db, count_sql, name) != [(1,)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert read_rows(db, count_sql, name) == [(1,)]


def test_deep_lines_over_stdio_are_parse_errors_and_the_next_line_is_served(
    stdio: StdioServer, home: Path
) -> None:
    before = fingerprint(home)
    deep_params = (
        '{"jsonrpc":"2.0","id":"deep-params","method":"tools/call","params":'
        '{"name":"recall","arguments":' + DEEP_OBJECTS + "}}"
    )
    for n, line in enumerate([DEEP_ARRAYS, deep_params]):
        stdio.send(line)
        answer = stdio.take_answer(None, "deep-params")
        assert answer["id"] is None
        assert answer["error"]["code"] == -32700, answer
        assert f"deeper than {MAX_JSON_DEPTH} levels" in answer["error"]["message"]
        tools = stdio.request(f"list-{n}", "tools/list")
        assert {t["name"] for t in tools["result"]["tools"]} == {op.name for op in TOOL_OPERATIONS}
    assert fingerprint(home) == before


def test_a_deep_body_on_mcp_over_http_is_a_json_rpc_parse_error(rest: str, home: Path) -> None:
    before = fingerprint(home)
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    deep_call = (
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":'
        '{"name":"recall","arguments":' + DEEP_OBJECTS + "}}"
    )
    initialize = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "deep", "version": "0"},
        },
    }

    for body in (DEEP_ARRAYS, deep_call):
        response = httpx.post(f"{rest}/mcp", content=body, headers=headers, timeout=30)
        assert response.status_code == 400, response.text
        assert response.headers["content-type"] == "application/json"
        error = response.json()["error"]
        assert error["code"] == -32700, error
        assert f"deeper than {MAX_JSON_DEPTH} levels" in error["message"]
    answered = httpx.post(f"{rest}/mcp", json=initialize, headers=headers, timeout=30)
    assert answered.status_code == 200, answered.text
    assert fingerprint(home) == before


def test_a_body_past_the_limit_on_mcp_over_http_is_refused_before_it_is_held(
    rest: str, home: Path
) -> None:
    """/mcp reads a POST body whole before the SDK sees it, so it is bounded as REST is."""
    before = fingerprint(home)
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "recall", "arguments": {"query": "x" * (2 * 1024 * 1024)}},
    }

    response = httpx.post(f"{rest}/mcp", json=call, headers=headers, timeout=30)

    assert response.status_code == 413, response.text
    error = response.json()["error"]
    assert error["code"] == -32600 and "1 MB limit" in error["message"]
    health = httpx.get(f"{rest}/v1/health", timeout=30)
    assert health.status_code == 200
    assert fingerprint(home) == before
