"""On PostgreSQL, reject UPDATE and DELETE of skill audit rows in the database itself.

The ORM already refuses both (``AppendOnlyModel``); the trigger also stops raw SQL and other clients.
TRUNCATE stays possible (test database flushes, deliberate retention jobs). SQLite relies on the ORM guard.
"""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION skills_skillaudit_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'skills_skillaudit is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS skills_skillaudit_append_only ON skills_skillaudit;
CREATE TRIGGER skills_skillaudit_append_only
    BEFORE UPDATE OR DELETE ON skills_skillaudit
    FOR EACH ROW EXECUTE FUNCTION skills_skillaudit_append_only();
"""

DROP = """
DROP TRIGGER IF EXISTS skills_skillaudit_append_only ON skills_skillaudit;
DROP FUNCTION IF EXISTS skills_skillaudit_append_only();
"""


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE, params=None)


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("skills", "0002_skill_classification")]
    operations = [migrations.RunPython(install, uninstall)]
