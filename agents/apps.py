import uuid
from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.db.models.signals import post_migrate

from agents.checks import sqlite_version_check


def catalog_version_ensure(sender: AppConfig, using: str = "default", **kwargs: Any) -> None:
    """Recreate the catalogue token row after a flush (migrations create it): without it, workers
    resolve every configuration at every send, which is correct but slow."""
    from agents.models import CatalogVersion
    from agents.models.catalog import CATALOG_VERSION_ID

    CatalogVersion.objects.using(using).get_or_create(
        id=CATALOG_VERSION_ID, defaults={"token": uuid.uuid4().hex}
    )


class AgentsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "agents"

    def ready(self) -> None:
        from agents.tools.builtins import register_builtins

        register_builtins()
        checks.register(sqlite_version_check, checks.Tags.database)
        post_migrate.connect(catalog_version_ensure, sender=self, dispatch_uid="agents.catalog_version")
