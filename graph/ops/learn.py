"""learn: record a structured lesson (error, root cause, fix, prevention) as a `lesson_learned`.

One lesson per distinct error per project. The lesson's name is derived from the project and a
*normalised* error text: the parts of an error message that change from one occurrence to the
next (numbers, durations, paths, URLs, hex ids, UUIDs, quoted values) are dropped and the words
that say what went wrong are kept, so "timeout after 30s in /a/b.py" and "timeout after 45s in
/c/d.py" append to one lesson while "connection refused" gets its own. (The original collapsed
every lesson into 7 coarse buckets, so unrelated errors piled up under one name.)
"""

from __future__ import annotations

import hashlib
import re
from typing import Annotated, Literal

from django.db import transaction
from pydantic import AfterValidator, Field

from core.errors import InvalidInput
from graph.errors import NameInOtherProject
from graph.models import Entity, Tag
from graph.ops.kit.fields import MAX_OBSERVATION_CHARS, Output, ProjectValue, StrictInput
from graph.ops.kit.operation import CallContext, Operation, ToolHints
from graph.ops.remember.schema import RememberInput, Retag
from graph.ops.remember.service import entity_remember, refuse_other_projects_name
from graph.project import plain_name
from graph.project_tags import project_tag

LESSON_TYPE = "lesson_learned"
LESSON_CONFIDENCE = 1.0  # an explicit lesson is stated by the agent, not inferred
SEVERITIES = ("minor", "major", "critical")  # ascending
# Room for the longest observation prefix ("Prevention: ") inside one observation's limit.
MAX_LESSON_FIELD = MAX_OBSERVATION_CHARS - 20
PATTERN_WORDS = 6  # words of the readable error-pattern tag
NAME_SLUG_CHARS = 60
PROJECT_HASH_CHARS = 8

Severity = Literal["critical", "major", "minor"]


def _stripped_not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value.strip()


def _stripped(value: str | None) -> str | None:
    return value.strip() or None if value is not None else None


LessonText = Annotated[
    str, Field(min_length=1, max_length=MAX_LESSON_FIELD), AfterValidator(_stripped_not_blank)
]
OptionalLessonText = Annotated[
    str | None, Field(max_length=MAX_LESSON_FIELD), AfterValidator(_stripped)
]


class LearnInput(StrictInput):
    error: LessonText = Field(
        description=(
            "What went wrong, e.g. the error message. The same error again (ignoring numbers, "
            "paths, ids and quoted values) appends to the same lesson."
        )
    )
    fix: LessonText = Field(description="What fixed it.")
    root_cause: OptionalLessonText = Field(default=None, description="Why it happened.")
    prevention: OptionalLessonText = Field(default=None, description="How to prevent it next time.")
    severity: Severity = Field(
        default="minor",
        description=(
            "`critical`, `major` or `minor` (default `minor`). A lesson keeps the highest "
            "severity it was ever recorded with."
        ),
    )
    project: ProjectValue = Field(
        default=None,
        description=(
            "Project id the lesson belongs to (default: the caller's current project). "
            "`false` files a general lesson that belongs to no project. Over MCP the "
            "session's project named by its plain name is stored as its id (`retagged`)."
        ),
    )


class LearnOutput(Output):
    learned: bool = Field(description="True when the lesson is stored.")
    name: str = Field(description="The lesson's entity name; recall it to see what is stored.")
    type: str = Field(description="Always `lesson_learned`.")
    retagged: list[Retag] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Present over MCP when `project` named the session's project by its plain "
        "name: the lesson is filed under the id.",
    )


# --- error normalisation --------------------------------------------------------------------

# Order matters: URLs and paths go before numbers (they contain digits and slashes), quoted
# values before words (a quoted value is the variable part: 'foo' in "cannot read 'foo'").
_VARIABLE_PARTS: tuple[re.Pattern[str], ...] = (
    re.compile(r"[a-z][a-z0-9+.-]*://\S+"),  # URLs
    re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),  # UUIDs
    re.compile(r"\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|“[^”\n]*”|‘[^’\n]*’"),  # quoted values
    re.compile(r"(?:\b[a-z]:)?(?:[\\/][\w.@~+-]+){2,}[\\/]?|(?:\.{1,2}|~)[\\/][\w.@~+/\\-]+"),
    re.compile(
        r"\b[\w.-]+\.(?:py|js|ts|tsx|jsx|mjs|cjs|go|rs|rb|java|kt|c|h|cpp|cs|php|json"
        r"|ya?ml|toml|md|txt|sh|sql|html|css|lock)\b"
    ),  # bare file names
    re.compile(r"\b0x[0-9a-f]+\b"),  # hex literals
    re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b"),  # hashes, hex ids
    re.compile(r"\b\d[\d.,:_]*[a-z]{0,3}\b"),  # numbers with a short unit: 30s, 1.5ms, 8080
)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
# Dropped from the readable pattern only; the hash keeps them ("before" vs "after" matters).
_FILLER = frozenset(
    [
        "a",
        "an",
        "the",
        "in",
        "on",
        "at",
        "of",
        "to",
        "for",
        "from",
        "by",
        "with",
        "after",
        "before",
        "is",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "and",
        "or",
        "not",
        "no",
        "error",
        "line",
    ]
)


def error_words(error: str) -> list[str]:
    """The words of an error message that identify it, with its variable parts removed."""
    text = error.casefold()
    for pattern in _VARIABLE_PARTS:
        text = pattern.sub(" ", text)
    return _WORD.findall(text)


def error_signature(error: str) -> tuple[str, str]:
    """(readable pattern, 10-hex-digit hash) of an error message's normalised form.

    An error that is nothing but variable parts (a bare path, a number) falls back to its
    whitespace-collapsed text, so it still gets a lesson of its own rather than sharing one
    with every other such error.
    """
    words = error_words(error)
    basis = " ".join(words) if words else " ".join(error.casefold().split())
    digest = hashlib.sha256(basis.encode()).hexdigest()[:10]
    readable = [w for w in words if w not in _FILLER] or words
    pattern = "-".join(_slug(w) for w in readable[:PATTERN_WORDS])
    pattern = re.sub(r"-{2,}", "-", pattern).strip("-")
    return pattern or "error", digest


def _slug(text: str) -> str:
    return re.sub(r"[^\w]+", "-", text.casefold(), flags=re.UNICODE).strip("-_")


def lesson_name(project: str | None, error: str) -> str:
    """`lesson-<project>-<readable pattern>-<hash>`; the hash makes it unique per error."""
    pattern, digest = error_signature(error)
    scope = _slug(project) if project else "general"
    slug = f"{scope[:NAME_SLUG_CHARS]}-{pattern[:NAME_SLUG_CHARS]}".strip("-")
    return f"lesson-{slug}-{digest}"


def project_lesson_name(project: str | None, error: str) -> str:
    """lesson_name with a hash of the project id: the name a lesson takes when its usual one
    is held by another project (`acme/shop` and `acme-shop` slug alike, and long ids are cut)."""
    digest = hashlib.sha256((project or "").encode()).hexdigest()[:PROJECT_HASH_CHARS]
    return f"{lesson_name(project, error)}-{digest}"


# --- the write ------------------------------------------------------------------------------


def _resolve_project(requested: str | bool | None, ctx: CallContext) -> str | None:
    if requested is False:
        return None
    if ctx.guide_rules and ctx.project and requested == plain_name(ctx.project):
        return ctx.project  # the session's own project by its plain name (see `retagged`)
    project = requested if isinstance(requested, str) else ctx.project
    if not project:
        raise InvalidInput(
            "No project: pass `project` (or `false` for a lesson that belongs to no project); "
            "this caller has no current project",
            field="project",
        )
    return project


@transaction.atomic
def lesson_learn(
    *,
    data: LearnInput,
    project: str | None,
    source_host: str,
    keep_projects_apart: bool = False,
    caller_project: str | None = None,
) -> LearnOutput:
    """Create the lesson for this error, or append this occurrence's fix to it.

    Observations already stored are not repeated (remember dedupes them), so learning the same
    error and fix twice changes nothing but the timestamps.

    With `keep_projects_apart` (the agent transports), a lesson name held by a memory of
    other projects only (neither `project` nor `caller_project`) is not appended to: the
    lesson takes project_lesson_name instead, and is refused (NameInOtherProject) only if
    that is held too.
    """
    pattern, _ = error_signature(data.error)
    name = lesson_name(project, data.error)
    if keep_projects_apart:
        allowed = {p for p in (project, caller_project) if p}
        try:
            refuse_other_projects_name(name, Entity.objects.id_for_name(name), allowed)
        except NameInOtherProject:
            name = project_lesson_name(project, data.error)
            refuse_other_projects_name(name, Entity.objects.id_for_name(name), allowed)
    observations = [f"Error: {data.error}"]
    if data.root_cause:
        observations.append(f"Root cause: {data.root_cause}")
    observations.append(f"Fix: {data.fix}")
    if data.prevention:
        observations.append(f"Prevention: {data.prevention}")
    tags = [f"severity:{data.severity}", "source:explicit", f"error-pattern:{pattern}"]
    if project:
        tags.insert(0, project_tag(project))

    # A new lesson is stated at LESSON_CONFIDENCE (an unsourced hypothesis all the same: docs/
    # trust.md); a recurring one keeps the confidence it has, as only `observe` raises one.
    new = Entity.objects.id_for_name(name) is None
    stored = entity_remember(
        data=RememberInput(
            name=name,
            type=LESSON_TYPE,
            observations=observations,
            tags=tags,
            confidence=LESSON_CONFIDENCE if new else None,
        ),
        source_host=source_host,
    )
    # A lesson carries one severity: the highest it was ever recorded with (a recurring error
    # that once took production down stays critical when it recurs as a nuisance).
    severity_tags = list(
        Tag.objects.filter(entity_id=stored.entityId, name__startswith="severity:")
    )
    ranked = [t for t in severity_tags if t.name.removeprefix("severity:") in SEVERITIES]
    if len(ranked) > 1:
        keep = max(ranked, key=lambda t: SEVERITIES.index(t.name.removeprefix("severity:")))
        Tag.objects.filter(pk__in=[t.pk for t in ranked if t.pk != keep.pk]).delete()
        Entity.objects.index_sync([stored.entityId])  # tags are part of the keyword index
    return LearnOutput(learned=True, name=stored.name, type=stored.type)


def _learn(data: LearnInput, ctx: CallContext) -> LearnOutput:
    project = _resolve_project(data.project, ctx)
    out = lesson_learn(
        data=data,
        project=project,
        source_host=ctx.source_host,
        keep_projects_apart=ctx.guide_rules,
        caller_project=ctx.project,
    )
    if isinstance(data.project, str) and project is not None and project != data.project:
        retag = Retag.model_validate(
            {"from": project_tag(data.project), "to": project_tag(project)}
        )
        out = out.model_copy(update={"retagged": [retag]})
    return out


LEARN = Operation(
    name="learn",
    summary=(
        "Record a structured lesson from a mistake or discovery: a lesson_learned entity with "
        "Error / Root cause / Fix / Prevention observations. The same error again (numbers, "
        "paths and ids aside) appends to the same lesson."
    ),
    input_model=LearnInput,
    output_model=LearnOutput,
    handler=_learn,
    hints=ToolHints(read_only=False, destructive=False, idempotent=False),
    examples=[
        {
            "error": "TypeError: Cannot read property of null",
            "fix": "Added optional chaining (?.) on API response",
            "root_cause": "API response can be null on timeout",
            "prevention": "Always validate API responses before accessing nested properties",
            "severity": "major",
            "project": "myapp",
        },
        {
            "error": "Tests fail with SIGSEGV in native module",
            "fix": "Changed vitest pool from threads to forks",
            "project": "myapp",
        },
    ],
    rest=True,  # POST /v1/learn
)
