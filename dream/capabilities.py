"""What GET /v1/config answers beside the configuration — what this installation can do: full
text search, vectors, which embedder and which LLM — and POST /v1/config/test's probe of a
provider (nothing is written). The configuration itself is core/config_sections.py's."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

# GET /v1/config's OpenAPI model is made from the TypedDicts below (api/rest/config_views.py),
# and before Python 3.12 pydantic reads nested ones only from typing_extensions.
from typing_extensions import TypedDict

from core.config_sections import config_load, masked
from dream.llm.chain import llm_chain
from dream.llm.probe import probe
from graph.embedding.config import load_config
from graph.indexing import generations


# No docstrings: they would become descriptions in the OpenAPI document.
class ConfigCapabilities(TypedDict):
    fts5: bool
    vectorSearch: bool
    scoring: bool
    knowledgeEvolution: bool
    embeddings: Annotated[str, Field(description="The embedding provider in use.")]
    llm: Annotated[
        dict[str, str] | None, Field(description="The primary LLM {provider, model}, or null.")
    ]
    searchLevel: int


class ConfigView(TypedDict):
    config: Annotated[
        dict[str, Any], Field(description="The stored configuration, every key as ***.")
    ]
    capabilities: ConfigCapabilities


def config_get() -> ConfigView:
    """GET /v1/config and `memesh config list`: the stored configuration, every key masked,
    and the capabilities."""
    config = config_load()
    chain = llm_chain(config)
    try:
        embeddings = load_config().provider
    except Exception:  # a broken embedder section is reported, not fatal here
        embeddings = "misconfigured"
    vectors = generations.vectors_supported()
    capabilities: ConfigCapabilities = {
        "fts5": True,
        "vectorSearch": vectors and embeddings not in ("none", "misconfigured"),
        "scoring": True,
        "knowledgeEvolution": True,
        "embeddings": embeddings,
        "llm": {"provider": chain[0].provider, "model": chain[0].model} if chain else None,
        "searchLevel": 2 if chain else (1 if embeddings not in ("none",) else 0),
    }
    return {"config": masked(config), "capabilities": capabilities}


def config_test(payload: object) -> dict[str, Any]:
    """POST /v1/config/test: probe a provider's model list (nothing is written)."""
    return probe(payload, config_load())
