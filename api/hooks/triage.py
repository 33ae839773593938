"""Hook calls with nothing to do, told from the hook input alone, before Django is set up.

Without a server, a `memesh hook` process sets Django up (~0.4 s) before its handler reads
the input. Some calls need nothing more than the input and the settings:
- PostToolUse runs after every Bash command, and only a `git commit` is captured
  (api/hooks/post_tool_use.py);
- UserPromptSubmit runs on every prompt, and only a "remember this" or a declared
  recipient's inbox needs the database (api/hooks/user_prompt_submit.py).
For the events in QUICK, api/hooks/entry.py asks `nothing_to_do` first and, when the
answer is yes, answers as the handler would: nothing on stdout, exit 0, nothing recorded.

When unsure — another event, arguments besides the event and its host, input the full run
refuses (not JSON, too long: that run records the failure), a call with work — the hook runs
in full as before. The decision is the handler module's own `has_work`, which its `handle`
asks first, so the two cannot disagree. What such a call skips is only what it would not have used:
Django's apps, and the migration check of the database (the next process that opens the
database applies any migration). The settings are still loaded, by api/hooks/entry.py,
so a bad MEMESH_* value is recorded as it always is.
"""

from __future__ import annotations

import importlib

from api.hooks.payload import parse_payload
from core.hook_hosts import hook_host

# Event → its handler module, which imports no Django model (settings only), and whose
# `has_work(payload) -> bool` its `handle` asks first.
QUICK: dict[str, str] = {
    "post-tool-use": "api.hooks.post_tool_use",
    "user-prompt-submit": "api.hooks.user_prompt_submit",
}


def nothing_to_do(args: list[str], stdin: str, *, limit: int) -> bool:
    """Whether `memesh <args>` (`hook <event>`, `--host <host>` maybe) given `stdin` is
    answered with silence and records nothing, whatever the database holds; False whenever
    that is not sure."""
    if len(args) < 2 or args[0] != "hook" or args[1] not in QUICK or len(stdin) > limit:
        return False
    try:
        payload = parse_payload(stdin, host=hook_host(args[2:]))
    except ValueError:  # HookArgumentsInvalid too: the full run records it
        return False
    module = importlib.import_module(QUICK[args[1]])
    return not module.has_work(payload)
