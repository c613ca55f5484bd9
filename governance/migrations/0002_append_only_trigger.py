"""On PostgreSQL, reject UPDATE and DELETE of governance events in the database itself."""

from django.db import migrations

from governance.migration_operations import append_only_trigger


class Migration(migrations.Migration):
    dependencies = [("governance", "0001_initial")]
    operations = [append_only_trigger("governance_governanceevent")]
