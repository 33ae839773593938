"""Which host ran a hook, and the `source_host` the hook's writes are stamped with.

`memesh setup <host>` writes the host into every hook command it installs for a host other
than Claude Code (`memesh hook stop --host codex`); the Claude Code plugin's hooks, and hooks
installed before hosts were named, carry none and are Claude Code's. Whatever a hook stores
(a commit, a session's evidence, the handoff, a note file, a "remember that …") gets
`metadata.provenance.source_host` `<host>-hooks`: `claude-code-hooks`, `codex-hooks`,
`gemini-cli-hooks`, `hermes-agent-hooks` (the Hermes provider runs the UserPromptSubmit
handler itself, in process or through `memesh serve`): a memory tells which host wrote it, and
that a hook did rather than the agent (what the agent stores through the MCP server carries
the host's name, `codex` for Codex: api/mcp_server/server.py CLIENT_HOSTS).

Standard library only: a hook reads its arguments before Django is set up.
"""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_HOOK_HOST = "claude-code"
HOOK_HOSTS = ("claude-code", "codex", "gemini-cli", "hermes-agent")
HOST_OPTION = "--host"


class HookArgumentsInvalid(ValueError):
    """The words after `memesh hook <event>` are not `--host <one of HOOK_HOSTS>`."""


def hook_host(words: Sequence[str]) -> str:
    """The host named by the words after `memesh hook <event>`: none is Claude Code,
    `--host NAME` or `--host=NAME` names one of HOOK_HOSTS; anything else raises."""
    if not words:
        return DEFAULT_HOOK_HOST
    if len(words) == 2 and words[0] == HOST_OPTION:
        name = words[1]
    elif len(words) == 1 and words[0].startswith(f"{HOST_OPTION}="):
        name = words[0].partition("=")[2]
    else:
        raise HookArgumentsInvalid(
            f"unexpected hook arguments {' '.join(words)!r} (only {HOST_OPTION} NAME)"
        )
    if name not in HOOK_HOSTS:
        raise HookArgumentsInvalid(
            f"no hook host {name!r} (one of {', '.join(HOOK_HOSTS)}): run `memesh setup` again"
        )
    return name


def hook_source_host(host: str) -> str:
    """`metadata.provenance.source_host` of what a hook run by `host` stores."""
    return f"{host}-hooks"
