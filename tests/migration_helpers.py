"""Move the test database to a migration state and get the historical models there."""

from __future__ import annotations

from django.apps.registry import Apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate_to(targets: list[tuple[str, str | None]]) -> Apps:
    """Migrate to ``targets`` (``(app, None)``: that app unmigrated) and return the models there."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state([(app, name) for app, name in targets if name is not None]).apps


def migrate_to_latest() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
