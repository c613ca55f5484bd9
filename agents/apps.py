from django.apps import AppConfig
from django.core import checks

from agents.checks import sqlite_version_check


class AgentsConfig(AppConfig):
    """The agent runtime: runs, their steps, the governed call every step makes, and the workers'
    tasks (docs/architecture.md)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "agents"

    def ready(self) -> None:
        # Django imports this module before any model exists, so what needs models is imported here,
        # once they do: the one place where an import inside a function is the rule, not a workaround.
        import agents.tasks  # noqa: F401  (registers the Celery tasks the runtime enqueues by name)
        from agents.builtin_tools import register_builtins

        register_builtins()
        checks.register(sqlite_version_check, checks.Tags.database)
