"""The catalogue version: one row whose token database triggers replace on every catalogue write.

A worker caches what a configuration resolves to (snippet selection, skill block, fallback models,
zone, offered tools) under this token, so the triggers must cover every table a send plan reads, and
must fire for every client (admin, ingest, bulk updates, raw SQL). A model's calibration columns are
left out: they change at every step and the serving model is read fresh at every send anyway.
"""

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

# Tables a send plan reads, with the columns whose update matters (None: every column).
CATALOG_TABLES: dict[str, tuple[str, ...] | None] = {
    "snippets_tag": None,
    "snippets_snippet": None,
    "snippets_snippet_tags": None,
    "skills_skillsource": None,
    "skills_skill": None,
    "agents_provider": None,
    "agents_llmmodel": (
        "id",
        "provider_id",
        "model_id",
        "context_window",
        "max_output_tokens",
        "tokenizer",
        "input_price_per_million",
        "output_price_per_million",
        "is_active",
    ),
    "agents_configuration": None,
    "agents_configurationskill": None,
    "agents_configurationfallback": None,
    "agents_toolsetting": None,
}

SQLITE_BUMP = "UPDATE agents_catalogversion SET token = lower(hex(randomblob(16))) WHERE id = 1;"
POSTGRES_FUNCTION = """
CREATE OR REPLACE FUNCTION agents_catalog_bump() RETURNS trigger AS $$
BEGIN
    UPDATE agents_catalogversion SET token = gen_random_uuid()::text WHERE id = 1;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""


def _sqlite_statements(table: str, columns: tuple[str, ...] | None) -> list[str]:
    update_of = f"UPDATE OF {', '.join(columns)}" if columns else "UPDATE"
    return [
        f"CREATE TRIGGER {table}_catalog_{name} AFTER {event} ON {table} BEGIN {SQLITE_BUMP} END;"
        for name, event in (("insert", "INSERT"), ("update", update_of), ("delete", "DELETE"))
    ]


def _postgres_statements(table: str, columns: tuple[str, ...] | None) -> list[str]:
    update_of = f"UPDATE OF {', '.join(columns)}" if columns else "UPDATE"
    return [
        f"CREATE TRIGGER {table}_catalog_write AFTER INSERT OR {update_of} OR DELETE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION agents_catalog_bump();",
        f"CREATE TRIGGER {table}_catalog_truncate AFTER TRUNCATE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION agents_catalog_bump();",
    ]


def install(apps: object, schema_editor: BaseDatabaseSchemaEditor) -> None:
    vendor = schema_editor.connection.vendor
    schema_editor.execute("INSERT INTO agents_catalogversion (id, token) VALUES (1, 'initial')", params=None)
    if vendor == "postgresql":
        schema_editor.execute(POSTGRES_FUNCTION, params=None)
    for table, columns in CATALOG_TABLES.items():
        if vendor == "sqlite":
            statements = _sqlite_statements(table, columns)
        elif vendor == "postgresql":
            statements = _postgres_statements(table, columns)
        else:
            raise NotImplementedError(f"catalogue version triggers are not written for {vendor}")
        for statement in statements:
            schema_editor.execute(statement, params=None)


def uninstall(apps: object, schema_editor: BaseDatabaseSchemaEditor) -> None:
    vendor = schema_editor.connection.vendor
    for table in CATALOG_TABLES:
        names = ("insert", "update", "delete") if vendor == "sqlite" else ("write", "truncate")
        for name in names:
            on_table = f" ON {table}" if vendor == "postgresql" else ""
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_catalog_{name}{on_table};", params=None)
    if vendor == "postgresql":
        schema_editor.execute("DROP FUNCTION IF EXISTS agents_catalog_bump();", params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0005_configuration_skills"),
        ("skills", "0003_skill_audit_append_only_trigger"),
        ("snippets", "0002_snippet_classification"),
    ]

    operations = [
        migrations.CreateModel(
            name="CatalogVersion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("token", models.CharField(max_length=64)),
            ],
        ),
        migrations.RunPython(install, uninstall),
    ]
