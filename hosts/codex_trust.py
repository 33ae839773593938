"""Which of memesh's hooks Codex will run: Codex runs a hook from a hooks.json only once the
user has trusted that hook's exact definition, and skips an untrusted one without a word
(https://developers.openai.com/codex/hooks — "Review and trust hooks").

Codex records trust in the user's config.toml (`$CODEX_HOME/config.toml`, whichever layer the
hook came from) as `/hooks` and the app server's `config/batchWrite` write it:

    [hooks.state."<hooks.json path>:<event>:<group index>:<handler index>"]
    trusted_hash = "sha256:<hex>"

`<event>` is the event in snake case (`pre_tool_use`); the hash is SHA-256 over the hook's
identity as compact JSON with sorted keys: `{"event_name", "matcher" (left out when there is
none), "hooks": [{"async", "command", "timeout", "type"}]}`. A trusted hash that no longer
matches (memesh's command moved, a timeout changed) is a hook Codex holds as "modified" and
skips too. Measured against Codex CLI 0.169.0's `hooks/list` (its `key`, `currentHash` and
`trustStatus`): should Codex change its hashing, memesh reports trusted hooks as untrusted —
a false alarm pointing at `/hooks`, never a silent miss.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from tomlkit.toml_document import TOMLDocument

from hosts import edits
from hosts.plugin import memesh_hook_argv

# What Codex assumes for a handler without a `timeout` (memesh's handlers always carry one).
DEFAULT_TIMEOUT_SEC = 600

TRUST_STEP = (
    "run `codex` and trust them in /hooks (Codex lists new or changed hooks as needing review)"
)


def hook_key(hooks_file: Path, event: str, group_index: int, handler_index: int) -> str:
    """The key Codex files a hook's trust under."""
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()
    return f"{hooks_file}:{snake}:{group_index}:{handler_index}"


def hook_hash(event: str, group: dict[str, Any], handler: dict[str, Any]) -> str:
    """The hash Codex compares with the trusted one (the module docstring has the recipe)."""
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()
    identity: dict[str, Any] = {
        "event_name": snake,
        "hooks": [
            {
                "async": handler.get("async", False),
                "command": handler.get("command"),
                "timeout": handler.get("timeout", DEFAULT_TIMEOUT_SEC),
                "type": handler.get("type", "command"),
            }
        ],
    }
    if group.get("matcher") is not None:
        identity["matcher"] = group["matcher"]
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def trusted_hashes(config: TOMLDocument) -> dict[str, str]:
    """`hooks.state`'s trusted hashes by key, from the user's config.toml."""
    hooks = config.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    if not isinstance(state, dict):
        return {}
    return {
        str(key): entry["trusted_hash"]
        for key, entry in state.items()
        if isinstance(entry, dict) and isinstance(entry.get("trusted_hash"), str)
    }


def untrusted_memesh_hooks(
    hooks_file: Path, hooks_document: dict[str, Any], user_config: TOMLDocument
) -> list[str]:
    """memesh's hooks in `hooks_file` (parsed: `hooks_document`) that Codex will skip because
    their current definition is not trusted in `user_config`, as `<Event> <matcher>
    <subcommand>`."""
    edits.check_hooks_shape(hooks_file, hooks_document)
    trusted = trusted_hashes(user_config)
    skipped = []
    for event, groups in (hooks_document.get("hooks") or {}).items():
        for group_index, group in enumerate(groups):
            for handler_index, handler in enumerate(group.get("hooks", [])):
                argv = memesh_hook_argv(handler.get("command"))
                if argv is None:
                    continue
                key = hook_key(hooks_file, event, group_index, handler_index)
                if trusted.get(key) != hook_hash(event, group, handler):
                    subcommand = argv[2] if len(argv) > 2 else ""
                    skipped.append(f"{event} {group.get('matcher') or '*'} {subcommand}")
    return skipped
