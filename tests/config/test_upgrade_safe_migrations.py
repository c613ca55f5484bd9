"""A column a migration adds after the previous release can be written by that release's code, which
may still serve while the release step migrates (README, "Upgrades"): it is nullable or has a
database default. Without one, PostgreSQL refuses every insert of the old code into its table."""

from __future__ import annotations

from django.db.migrations.loader import MigrationLoader
from django.db.migrations.operations import AddField

# The last migration of each app in the previous release (20dc3b1); the apps made since have none.
PREVIOUS_RELEASE = {"agents": 24, "governance": 14, "snippets": 3, "skills": 3}


def _added_since_the_previous_release() -> list[tuple[str, str, AddField]]:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    added = []
    for (app, name), migration in sorted(loader.disk_migrations.items()):
        if app not in PREVIOUS_RELEASE and app not in ("catalog", "tools", "gateway", "evaluations"):
            continue  # Django's own apps and third parties
        if int(name[:4]) <= PREVIOUS_RELEASE.get(app, 0):
            continue
        added += [(app, name, op) for op in migration.operations if isinstance(op, AddField)]
    return added


def test_every_column_added_since_the_previous_release_is_nullable_or_has_a_database_default():
    loader = MigrationLoader(None)
    state = loader.project_state()
    unsafe = []
    for app, name, operation in _added_since_the_previous_release():
        model = state.apps.get_model(app, operation.model_name)
        field = model._meta.get_field(operation.name)
        if not (field.null or field.many_to_many or field.has_db_default()):
            unsafe.append(f"{app}.{name}: {operation.model_name}.{operation.name}")
    assert unsafe == []


def test_the_rule_finds_the_columns_it_checks():
    """The check reads the migrations it is meant to: the release's added columns are among them."""
    names = {(app, op.model_name, op.name) for app, _, op in _added_since_the_previous_release()}
    assert {("agents", "agentstep", "integrity"), ("gateway", "completionrecord", "label")} <= names
