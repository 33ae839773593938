"""Claude Code's hooks as a transport: `memesh hook <event>` (api/hooks/management/commands/hook.py)
reads the host's hook input (JSON on stdin), calls the graph's capture services and selectors,
and answers exactly as Claude Code reads a hook's answer. One module per event; `dispatch`
runs them, and turns any failure into a line of MEMESH_HOME/hook-outcomes.jsonl and silence.
"""
