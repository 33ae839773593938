"""Memories kept by other programs (the original MeMesh, the official MCP memory server,
basic-memory, mem0, Claude Code's notes) brought into memesh: each format has one reader in
`readers/` that turns its files into `ForeignMemory` records, and one import service writes
them through memesh's own bundle import."""
