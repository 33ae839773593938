"""docs/mcp.md: every JSON and TOML client snippet parses and starts the same `memesh mcp`
(or points at the same /mcp URL of `memesh serve`), and the shell snippets agree with them."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import get_commands

from api.cli.installation.management.commands.serve import Command as ServeCommand

DOC = Path(settings.BASE_DIR) / "docs" / "mcp.md"
COMMAND = "/path/to/memesh/.venv/bin/memesh"
FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(lang: str) -> list[str]:
    return [body for tag, body in FENCE.findall(DOC.read_text(encoding="utf-8")) if tag == lang]


def serve_url() -> str:
    parser = ServeCommand().create_parser("memesh", "serve")
    defaults = parser.parse_args([])
    return f"http://{defaults.host}:{defaults.port}/mcp"


def memesh_entry(config: dict[str, Any]) -> dict[str, Any]:
    servers = config.get("mcpServers") or config.get("mcp_servers")
    assert isinstance(servers, dict) and set(servers) == {"memesh"}, config
    entry = servers["memesh"]
    assert isinstance(entry, dict)
    return entry


def check_entry(entry: dict[str, Any]) -> str:
    """'stdio' or 'http', after checking the entry names memesh consistently."""
    if "command" in entry:
        assert entry["command"] == COMMAND
        assert entry["args"] == ["mcp"]
        return "stdio"
    urls = [entry[key] for key in ("url", "httpUrl") if key in entry]
    assert urls == [serve_url()], entry
    return "http"


def test_every_fenced_block_has_a_language_tag() -> None:
    tags = [tag for tag, _ in FENCE.findall(DOC.read_text(encoding="utf-8"))]
    assert tags and all(tags), tags


def test_json_snippets_parse_and_name_the_mcp_command() -> None:
    kinds = [check_entry(memesh_entry(json.loads(body))) for body in blocks("json")]
    # .mcp.json, Gemini CLI and Cursor over stdio; Gemini CLI and Cursor over HTTP
    assert kinds.count("stdio") == 3
    assert kinds.count("http") == 2


def test_toml_snippet_parses_and_names_the_mcp_command() -> None:
    (body,) = blocks("toml")
    assert check_entry(memesh_entry(tomllib.loads(body))) == "stdio"


def test_shell_snippets_start_the_same_server() -> None:
    commands = [shlex.split(line) for body in blocks("sh") for line in body.splitlines() if line]
    assert commands
    for argv in commands:
        assert argv[:3] == ["claude", "mcp", "add"], argv
        if "--" in argv:
            assert argv[argv.index("--") + 1 :] == [COMMAND, "mcp"]
            assert argv[3:-3] == ["memesh"]
        else:
            assert argv[-2:] == ["memesh", serve_url()]
            assert argv[3:5] == ["--transport", "http"]


def test_the_prose_uses_the_same_command_and_url() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert f"{COMMAND} mcp" in text
    assert serve_url() in text
    assert "python -m memesh_site.cli mcp" in text


def test_the_command_the_docs_name_exists() -> None:
    assert "mcp" in get_commands()
