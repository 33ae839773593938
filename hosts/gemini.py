"""memesh's hooks as Gemini CLI runs them: the plugin's hooks (hosts/plugin.py) under Gemini
CLI's event and tool names, in its settings.json beside the MCP server.

Gemini CLI's hooks take the same JSON in and out as Claude Code's (its hooks reference:
`session_id`, `transcript_path`, `cwd`, `tool_name`, `tool_input`; `hookSpecificOutput.
additionalContext`), under other names, with the timeout in milliseconds:

| plugin | Gemini CLI | what reaches the model |
| --- | --- | --- |
| SessionStart | SessionStart | the memory block (before the first prompt) |
| UserPromptSubmit | BeforeAgent | context after the prompt |
| PostToolUse Bash | AfterTool run_shell_command | context after the tool's result |
| PostToolUse ExitPlanMode, AskUserQuestion | AfterTool exit_plan_mode, ask_user | the same |
| Stop | AfterAgent | — (a line for the user) |

Left out, as Gemini CLI 0.61 runs them:
- PreToolUse: BeforeTool's `additionalContext` reaches no one (only a block or rewritten
  arguments do), so the file context and lesson guards would cost a process per call for
  nothing;
- PreCompact: PreCompress fires before every model request, compressed or not (its
  ChatCompressionService fires it before checking the threshold), so memesh would write a
  pre-compact summary at every step.
"""

from __future__ import annotations

from hosts.plugin import HookSpec, hook_specs

# The plugin's event -> Gemini CLI's.
EVENTS = {
    "SessionStart": "SessionStart",
    "UserPromptSubmit": "BeforeAgent",
    "PostToolUse": "AfterTool",
    "Stop": "AfterAgent",
}
# The plugin's tool matchers -> Gemini CLI's (a regular expression over its tool names, as the
# plugin's are over Claude Code's).
MATCHERS = {
    "Bash": "run_shell_command",
    "ExitPlanMode|AskUserQuestion": "exit_plan_mode|ask_user",
}


def gemini_hook_specs() -> list[HookSpec]:
    """The plugin's hooks Gemini CLI runs (the module docstring says which), as it names them."""
    specs = []
    for spec in hook_specs():
        event = EVENTS.get(spec.event)
        if event is None or (spec.matcher is not None and spec.matcher not in MATCHERS):
            continue
        specs.append(
            HookSpec(
                event=event,
                matcher=MATCHERS[spec.matcher] if spec.matcher is not None else None,
                subcommand=spec.subcommand,
                timeout=spec.timeout * 1000 if spec.timeout is not None else None,
            )
        )
    return specs
