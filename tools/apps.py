from django.apps import AppConfig


class ToolsConfig(AppConfig):
    """Tools: the registry every tool is offered from, the one tool gate, and MCP tool servers."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "tools"

    def ready(self) -> None:
        # Imported once the models exist (see AgentsConfig.ready).
        from tools.mcp import register_mcp_source

        register_mcp_source()
