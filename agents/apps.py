from django.apps import AppConfig
from django.core import checks
from django.db.models.signals import post_migrate

from agents.checks import sqlite_version_check


class AgentsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "agents"

    def ready(self) -> None:
        # Django imports this module before any model exists, so what needs models is imported here,
        # once they do: the one place where an import inside a function is the rule, not a workaround.
        import agents.tasks  # noqa: F401  (registers the Celery tasks the runtime enqueues by name)
        from agents.builtin_tools import register_builtins
        from agents.receivers import catalog_version_ensure
        from agents.tools.mcp import register_mcp_source

        register_builtins()
        register_mcp_source()
        checks.register(sqlite_version_check, checks.Tags.database)
        post_migrate.connect(catalog_version_ensure, sender=self, dispatch_uid="agents.catalog_version")
