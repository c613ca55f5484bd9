"""On PostgreSQL, reject UPDATE and DELETE of skill audit rows in the database itself."""

from django.db import migrations

from governance.migration_operations import append_only_trigger


class Migration(migrations.Migration):
    dependencies = [("skills", "0002_skill_classification")]
    operations = [append_only_trigger("skills_skillaudit")]
