"""`complete`: the fallback chain: the primary `llm`, then `llmFallbacks`
in order, one telemetry row per attempt.

What moves the chain on and what stops it: a 400 means the request itself is wrong — every
provider would refuse it, so the chain stops there. Auth failures, rate limits (429, whatever
its Retry-After), 5xx, network errors, timeouts and unparseable replies are this provider's
problem: the next one is tried. Error messages are redacted (the configured keys literally, and
anything key-shaped) before they are stored or raised.
"""

from __future__ import annotations

import logging
import uuid
from functools import partial
from typing import Any

from core import config_store
from core.errors import OperationFailed
from core.redact import redact_message, secret_values
from core.timing import Stopwatch
from dream.llm import providers
from dream.llm.errors import LLMNotConfigured
from dream.llm.providers import DEFAULT_MODELS, ProviderSpec
from dream.llm.types import LLMRequest, LLMResult, LLMUnavailable
from dream.telemetry import attempt_record

logger = logging.getLogger(__name__)

STOP_CLASSES = frozenset({"bad_request"})


def llm_chain(config: dict[str, Any]) -> list[ProviderSpec]:
    """The providers to try, in order: the primary `llm`, then `llmFallbacks` (sections of
    config.json that dream/config.py validates)."""
    entries = [config.get("llm"), *(config.get("llmFallbacks") or [])]
    chain: list[ProviderSpec] = []
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("provider") not in DEFAULT_MODELS:
            continue
        provider = str(entry["provider"])
        chain.append(
            ProviderSpec(
                provider=provider,
                model=str(entry.get("model") or DEFAULT_MODELS[provider]),
                api_key=str(entry.get("apiKey") or ""),
                base_url=str(entry.get("baseUrl") or ""),
            )
        )
    return chain


def complete(request: LLMRequest) -> LLMResult:
    try:
        config = config_store.load()
    except config_store.ConfigUnreadable as exc:
        raise OperationFailed(exc.summary) from None
    chain = llm_chain(config)
    if not chain:
        raise LLMNotConfigured(
            "No LLM provider is configured: set one with `memesh config set llm "
            '\'{"provider": "anthropic", "apiKey": "..."}\'` or POST /v1/config'
        )
    secrets = secret_values(config)
    # One telemetry row per attempt, all under the call's id.
    record = partial(
        attempt_record,
        call_id=uuid.uuid4(),
        flow=request.flow,
        project=request.project,
        secrets=secrets,
    )
    last_class, last_message = "unknown", ""
    for index, spec in enumerate(chain):
        clock = Stopwatch()
        try:
            text = providers.complete(spec, request)
        except providers.ProviderError as exc:
            latency = clock.ms
            last_class = exc.error_class
            last_message = redact_message(exc.message, secrets)
            record(
                attempt=index,
                provider=spec.provider,
                model=spec.model,
                ok=False,
                latency_ms=latency,
                error_class=exc.error_class,
                message=last_message,
            )
            logger.warning(
                "LLM attempt %d (%s/%s) failed: %s: %s",
                index,
                spec.provider,
                spec.model,
                exc.error_class,
                last_message,
            )
            if exc.error_class in STOP_CLASSES:
                raise LLMUnavailable(
                    f"{spec.provider} refused the request as malformed (the chain stops on a "
                    f"400): {last_message}",
                    error_class=exc.error_class,
                ) from None
            continue
        record(
            attempt=index,
            provider=spec.provider,
            model=spec.model,
            ok=True,
            latency_ms=clock.ms,
            fallback_used=index > 0,
        )
        return LLMResult(
            text=text,
            provider=spec.provider,
            model=spec.model,
            attempts=index + 1,
            fallback_used=index > 0,
        )
    raise LLMUnavailable(
        f"every LLM provider failed ({len(chain)} tried); last: {last_class}: {last_message}",
        error_class=last_class,
    )
