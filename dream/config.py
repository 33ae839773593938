"""dream's sections of config.json (core/config_sections.py is the registry and the service;
DreamConfig.ready() registers these):

- `llm` {provider, model, apiKey, baseUrl}: the primary provider. An update that omits `apiKey`
  keeps the stored key when the provider is unchanged.
- `llmFallbacks`: the ordered failover chain, written whole. A fallback entry keeps its stored
  key only through an explicit `keepKeyFrom: <index it had in the loaded chain>`, honoured only
  when that stored entry has the same provider, and stripped before saving.
- `language`: the language generated memories are written in (≤ 60 chars; unset: English).
- `transcriptMining`: scheduled transcript mining (dream/mining/service.py reads it).

Their shapes are dream/llm/settings.py's; the chain that reads `llm` and `llmFallbacks` is
dream/llm/chain.py.
"""

from __future__ import annotations

from core.config_sections import ConfigSection
from graph.config_sections import typed_section

LANGUAGE_SETTING = "language"


def merge_llm(new: object, stored: object) -> object:
    """The primary provider as saved: the stored key is kept when the update omits one and
    names the same provider."""
    assert isinstance(new, dict)  # checked: an LLMSettings object
    entry = dict(new)
    if (
        "apiKey" not in entry
        and isinstance(stored, dict)
        and stored.get("provider") == entry.get("provider")
        and stored.get("apiKey")
    ):
        entry["apiKey"] = stored["apiKey"]
    return entry


def merge_fallbacks(new: object, stored: object) -> object:
    """The chain as saved: each entry's `keepKeyFrom` resolved against the stored chain (the
    module docstring's rule) and dropped."""
    assert isinstance(new, list)  # checked: a list of FallbackSettings objects
    stored_list = stored if isinstance(stored, list) else []
    chain: list[dict[str, object]] = []
    for item in new:
        entry = dict(item)
        keep = entry.pop("keepKeyFrom", None)
        if "apiKey" not in entry and isinstance(keep, int) and keep < len(stored_list):
            source = stored_list[keep]
            # The provider guard: a stale index never grafts one provider's key onto another.
            if (
                isinstance(source, dict)
                and source.get("provider") == entry.get("provider")
                and source.get("apiKey")
            ):
                entry["apiKey"] = source["apiKey"]
        chain.append(entry)
    return chain


SECTIONS: tuple[ConfigSection, ...] = (
    typed_section(
        "llm",
        "dream.llm.settings:LLMSettings",
        "The primary LLM provider.",
        secret_fields=("apiKey",),
        merge=merge_llm,
    ),
    typed_section(
        "llmFallbacks",
        "dream.llm.settings:FallbackChain",
        "The ordered failover chain, replacing the stored one whole.",
        secret_fields=("apiKey",),
        merge=merge_fallbacks,
    ),
    typed_section(
        LANGUAGE_SETTING,
        str,
        "Output language of generated memories (a locale or a language name).",
        constraints={"min_length": 1, "max_length": 60},
    ),
    typed_section("transcriptMining", bool, "Scheduled transcript mining.", default=False),
)
