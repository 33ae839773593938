from django.apps import AppConfig


class McpServerConfig(AppConfig):
    """The MCP transport: `memesh mcp` is found in this app's management/commands."""

    name = "api.mcp_server"
    label = "memesh_mcp"
    verbose_name = "memesh MCP server"
