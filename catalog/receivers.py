"""Signal receivers of the agents app, connected in ``AgentsConfig.ready``."""

from __future__ import annotations

import uuid
from typing import Any

from django.apps import AppConfig

from catalog.models import CatalogVersion
from catalog.models.catalog import CATALOG_VERSION_ID


def catalog_version_ensure(sender: AppConfig, using: str = "default", **kwargs: Any) -> None:
    """Recreate the catalogue token row after a flush (migrations create it): without it, workers
    resolve every configuration at every send, which is correct but slow."""
    CatalogVersion.objects.using(using).get_or_create(
        id=CATALOG_VERSION_ID, defaults={"token": uuid.uuid4().hex}
    )
