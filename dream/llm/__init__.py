"""LLM calls for the dream flows: one entry point, `dream.llm.chain.complete`, over the
configured provider chain (primary `llm`, then `llmFallbacks`), with one telemetry row
(`LLMAttempt`) per attempt.

Modules: types.py (LLMRequest, LLMResult, LLMUnavailable), chain.py (`complete`), providers.py
(the wire formats), probe.py (POST /v1/config/test).

Contract used by the dreamer, pattern detector, conflict judge and validator:

    result = complete(LLMRequest(flow="dreamer", system=..., prompt=..., project=...))
    result.text  # the model's reply

Raises `dream.llm.errors.LLMNotConfigured` when no provider is configured, and `LLMUnavailable`
when every provider of the chain failed (or the chain stopped on a 400).
"""
