"""Migration operations that introduce classification on an existing table (docs/governance.md, "Vocabulary").

Rows that exist when the migration runs predate classification: they become ``observe`` with no
declared class, so a violation is recorded but nothing they send today is cut off. The field default
then switches to ``enforce``, so every row created afterwards enforces and must declare its class and
ceiling; a database constraint backs the model validation. Every classified app uses these same
operations, so the pattern cannot drift between apps.
"""

from __future__ import annotations

import functools
from typing import Any

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

from governance.vocabulary import DataClass, Enforcement, TrustZone


def _fields(prefix: str) -> tuple[str, str, str]:
    return f"{prefix}data_class", f"{prefix}ceiling", f"{prefix}enforcement"


def add_classification(
    model_name: str, *, prefix: str = "", constraint: str, historical_model: str | None = None
) -> list[migrations.operations.base.Operation]:
    """Operations adding ``<prefix>data_class``, ``<prefix>ceiling`` and ``<prefix>enforcement``.

    ``historical_model`` names a django-simple-history shadow table that needs the same fields
    (without the constraint: history keeps what rows were, including observe rows).
    """
    data_class, ceiling, enforcement = _fields(prefix)
    operations: list[migrations.operations.base.Operation] = []
    for model in [model_name] + ([historical_model] if historical_model else []):
        operations += [
            migrations.AddField(
                model_name=model,
                name=data_class,
                field=models.CharField(blank=True, choices=DataClass.choices, default="", max_length=32),
                preserve_default=False,
            ),
            migrations.AddField(
                model_name=model,
                name=ceiling,
                field=models.CharField(blank=True, choices=TrustZone.choices, default="", max_length=32),
                preserve_default=False,
            ),
            # Existing rows take the one-off default "observe"; the model default is "enforce".
            migrations.AddField(
                model_name=model,
                name=enforcement,
                field=models.CharField(
                    choices=Enforcement.choices, default=Enforcement.OBSERVE, max_length=16
                ),
            ),
            migrations.AlterField(
                model_name=model,
                name=enforcement,
                field=models.CharField(
                    choices=Enforcement.choices, default=Enforcement.ENFORCE, max_length=16
                ),
            ),
        ]
    operations.append(
        migrations.AddConstraint(
            model_name=model_name,
            constraint=models.CheckConstraint(
                condition=models.Q((enforcement, Enforcement.OBSERVE))
                | (~models.Q((data_class, "")) & ~models.Q((ceiling, ""))),
                name=constraint,
            ),
        )
    )
    return operations


def append_only_trigger(table: str) -> migrations.RunPython:
    """On PostgreSQL, a trigger rejecting UPDATE and DELETE on ``table`` in the database itself.

    The ORM already refuses both (``AppendOnlyModel``); the trigger also stops raw SQL and other
    clients. TRUNCATE stays possible (test database flushes, deliberate retention jobs), as it fires
    no row triggers. SQLite has no equivalent worth its complexity and relies on the ORM guard.
    """
    name = f"{table}_append_only"
    create = f"""
CREATE OR REPLACE FUNCTION {name}() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '{table} is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS {name} ON {table};
CREATE TRIGGER {name}
    BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION {name}();
"""
    drop = f"DROP TRIGGER IF EXISTS {name} ON {table};\nDROP FUNCTION IF EXISTS {name}();"

    def install(apps: object, schema_editor: BaseDatabaseSchemaEditor) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(create, params=None)

    def uninstall(apps: object, schema_editor: BaseDatabaseSchemaEditor) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(drop, params=None)

    return migrations.RunPython(install, uninstall)


def content_types_moved(*, from_app: str, to_app: str, models: list[str]) -> migrations.RunPython:
    """Move the content types of ``models`` (lower-case model names) from ``from_app`` to ``to_app`` in
    place: their ids stay, so the permissions, groups, drafts and admin log entries that point at
    them follow the models to their new app. Reversible. On a fresh database there are none yet
    (``post_migrate`` creates them) and this does nothing."""

    def move(apps: Any, schema_editor: BaseDatabaseSchemaEditor, *, old: str, new: str) -> None:
        content_type = apps.get_model("contenttypes", "ContentType")
        using = schema_editor.connection.alias
        content_type.objects.using(using).filter(app_label=old, model__in=models).update(app_label=new)

    return migrations.RunPython(
        functools.partial(move, old=from_app, new=to_app),
        functools.partial(move, old=to_app, new=from_app),
    )
