"""Whether the peer compatibility surface is on: MEMESH_PEER_API=1, or `peerApi: true` in
config.json (`memesh config set peerApi true`). Off by default, so memesh's tool list stays as
the MeMesh reference has it. An MCP server reads it when it first lists its tools (a restart
picks up a change); the REST routes read it on every request."""

from __future__ import annotations

from django.conf import settings

from core import config_sections, config_store

CONFIG_KEY = "peerApi"


def peer_api_enabled() -> bool:
    if settings.MEMESH_PEER_API:
        return True
    try:
        return config_sections.setting(CONFIG_KEY) is True
    except config_store.ConfigUnreadable:
        return False  # an unreadable file turns nothing on; `memesh config` reports it
