"""The one result an agent submits for a work package, validated strictly, and the proposal
content it becomes — the same content the LLM flows stage for the same material:

- a digest result is what the dreamer asks its model for (`{name, title, observations}`); it
  goes through the dreamer's own reply parser (dream/prompts.py, `parse_digest`) and is named
  like the dreamer's digests (dream/dreamer.py, `digest_name`);
- a transcript result is one memory as transcript mining asks for them (`{type, name, title,
  observations, evidence}`); it goes through the miner's parser (prompts.parse_mined) and
  sanitiser (dream/mining/service.py, `sanitised`).

Stricter than a model's reply, which is read leniently: an agent is a caller with a schema.
Unknown keys, wrong types, empty or over-long text and too many observations are refused
(`validation.bad-body`, naming the field) rather than cut or dropped, and a result in which
the capture-path detector finds a secret is refused whole (`work_package.secret-in-result`).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, Field

from core.errors import InvalidInput
from core.redact import find_secret
from dream import prompts
from dream.dreamer import Cluster, digest_name
from dream.mining.service import (
    MAX_NAME_CHARS,
    MAX_OBSERVATION_CHARS,
    MAX_TITLE_CHARS,
    sanitised,
    secret_in,
)
from dream.passes import DIGEST_TYPE
from graph.ops.kit.fields import StrictInput, stripped_not_blank
from graph.ops.kit.operation import validated
from graph.project_tags import PROJECT_TAG_PREFIX
from proposals.errors import SecretInResult

M = TypeVar("M", bound=StrictInput)
Text = Annotated[str, AfterValidator(stripped_not_blank)]
Observation = Annotated[Text, Field(min_length=1, max_length=MAX_OBSERVATION_CHARS)]


class DigestResult(StrictInput):
    """A digest of the package's memories: only what they support."""

    name: Annotated[Text, Field(min_length=1, max_length=MAX_NAME_CHARS)] = Field(
        description="A short kebab-case name (memesh prefixes `digest-`)."
    )
    title: Annotated[Text, Field(min_length=1, max_length=MAX_TITLE_CHARS)] | None = Field(
        default=None, description="One line."
    )
    observations: list[Observation] = Field(
        min_length=1,
        max_length=prompts.MAX_DIGEST_OBSERVATIONS,
        description="The durable facts the memories record, each one self-contained.",
    )


class MemoryResult(StrictInput):
    """The single most durable memory of the package's conversation."""

    type: Literal["decision", "lesson_learned", "fact"] = Field(
        description="decision (taken, with its reason), lesson_learned (a pitfall and its fix) "
        "or fact (how something in the project works)."
    )
    name: Annotated[Text, Field(min_length=1, max_length=MAX_NAME_CHARS)] = Field(
        description="A short kebab-case name."
    )
    title: Annotated[Text, Field(min_length=1, max_length=MAX_TITLE_CHARS)] | None = Field(
        default=None, description="One line."
    )
    observations: list[Observation] = Field(
        min_length=1,
        max_length=prompts.MAX_MINED_OBSERVATIONS,
        description="Self-contained statements, understandable without the conversation.",
    )
    evidence: Annotated[Text, Field(max_length=prompts.MAX_EVIDENCE_CHARS)] | None = Field(
        default=None, description="A short quote from the conversation."
    )


def result_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema a package's `result` must satisfy (shown in the package)."""
    model = DigestResult if kind == "digest" else MemoryResult
    schema = model.model_json_schema()
    schema.pop("title", None)
    return schema


def _result(model: type[M], result: object) -> M:
    """`result` as `model`, or InvalidInput naming the field under `result`."""
    try:
        return validated(model, result)
    except InvalidInput as exc:
        raise InvalidInput(
            f"result.{exc.message}" if exc.field else f"result: {exc.message}",
            field=f"result.{exc.field}" if exc.field else "result",
        ) from None


def _refuse_secrets(texts: list[str]) -> None:
    for text in texts:
        finding = find_secret(text)
        if finding is not None:
            raise SecretInResult(
                f"The result holds what looks like a secret ({finding.detector}); nothing was "
                "staged. Leave credentials out of memories.",
                field="result",
            )


def digest_proposed(result: object, *, project: str, week: str) -> dict[str, Any]:
    """A digest result as the dreamer's proposal content (without its origin)."""
    data = _result(DigestResult, result)
    _refuse_secrets([data.name, data.title or "", *data.observations])
    digest = prompts.parse_digest(json.dumps(data.model_dump()))
    return {
        "name": digest_name(digest.name, Cluster(project, week, [])),
        "type": DIGEST_TYPE,
        "title": digest.title,
        "observations": digest.observations,
        "tags": [f"{PROJECT_TAG_PREFIX}{project}"] if project else [],
    }


def memory_proposed(result: object) -> dict[str, Any]:
    """A transcript result as transcript mining's proposal content (without tags or source)."""
    data = _result(MemoryResult, result)
    mined, unusable = prompts.parse_mined(json.dumps({"memories": [data.model_dump()]}))
    assert len(mined) == 1 and not unusable  # the strict model admits only usable memories
    proposed = sanitised(mined[0])
    secret = secret_in(mined[0], proposed)
    if secret is not None:
        raise SecretInResult(
            f"The result's {secret[0]} holds what looks like a secret ({secret[1]}); nothing "
            "was staged. Leave credentials out of memories.",
            field=f"result.{secret[0]}",
        )
    return proposed
