"""memesh in the agent hosts: `memesh setup <host>` writes each host's configuration, and
`memesh doctor` reports whether it is in place (docs/integrations.md).

- `plugin`: the Claude Code plugin shipped in integrations/claude-code/ — its hook set and MCP
  server are the one definition every host's configuration is rendered from — and the `memesh`
  command the hosts are given.
- `documents`: reading a host's JSON or TOML file, the change to it as a diff, and writing it
  atomically with a backup; a file memesh cannot parse is refused, never overwritten.
- `edits`: pure functions that add or remove memesh's entries (its hooks, its `memesh` MCP
  server) in a parsed document and leave everything else as it was.
- `setup`: which files each host and scope use, and the install or uninstall plan for them.
- `health`: what is installed where, for `memesh doctor`.
- `codex_trust`: which of memesh's hooks Codex will skip until the user trusts them, read from
  the trust records Codex keeps in its config.toml.
"""
