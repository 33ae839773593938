"""The digest validator (`--validate`): a second LLM pass that checks a proposed digest's
claims against the memories it summarises.

Verdicts (the reference): `pass` — every claim checked and supported; `soften` — some claims
overreach, listed as validation_warnings on the proposal; `reject` — the digest is not staged;
`unavailable` — the validator could not run (LLM unreachable, chain exhausted, or a reply that
was not a verdict). `unavailable` lets the digest through like `pass`, but is recorded as
itself, so a digest validated by nothing never passes for a checked one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dream import prompts
from dream.llm.types import LLMRequest, LLMResult, LLMUnavailable

UNAVAILABLE = prompts.Validation(verdict="unavailable", warnings=[])


def validate_digest(
    digest: prompts.Digest,
    memories: Sequence[prompts.Memory],
    *,
    call: Callable[[LLMRequest], LLMResult],
    language: str | None,
    project: str,
) -> prompts.Validation:
    system, prompt = prompts.validator_prompt(digest, memories, language)
    try:
        reply = call(
            LLMRequest(flow="digest_validator", system=system, prompt=prompt, project=project)
        )
        return prompts.parse_validation(reply.text)
    except (LLMUnavailable, prompts.Unparseable):
        return UNAVAILABLE
