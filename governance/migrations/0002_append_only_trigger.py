"""On PostgreSQL, reject UPDATE and DELETE of governance events in the database itself.

The ORM already refuses both; the trigger also stops raw SQL and other clients. TRUNCATE stays
possible (test database flushes and deliberate retention jobs), as it fires no row triggers.
SQLite has no equivalent worth its complexity, so the embedded default relies on the ORM guard.
"""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION governance_event_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'governance_governanceevent is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS governance_event_append_only ON governance_governanceevent;
CREATE TRIGGER governance_event_append_only
    BEFORE UPDATE OR DELETE ON governance_governanceevent
    FOR EACH ROW EXECUTE FUNCTION governance_event_append_only();
"""

DROP = """
DROP TRIGGER IF EXISTS governance_event_append_only ON governance_governanceevent;
DROP FUNCTION IF EXISTS governance_event_append_only();
"""


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE, params=None)


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("governance", "0001_initial")]
    operations = [migrations.RunPython(install, uninstall)]
