"""A publication names the history version it created; editors may browse publications."""

from django.db import migrations, models

GROUP = "editors"
VIEW = ("governance", "view_publication")


def _create_model_permissions(apps):
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        stub = not getattr(app_config, "models_module", None)
        if stub:  # historical app configs have no models module; create_permissions skips those
            app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        if stub:
            app_config.models_module = None


def add_view(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    _create_model_permissions(apps)
    group, _ = Group.objects.get_or_create(name=GROUP)
    app_label, codename = VIEW
    group.permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))


def remove_view(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    app_label, codename = VIEW
    for group in Group.objects.filter(name=GROUP):
        ids = Permission.objects.filter(content_type__app_label=app_label, codename=codename)
        group.permissions.remove(*ids.values_list("pk", flat=True))  # by key: the models' states differ


class Migration(migrations.Migration):
    dependencies = [("governance", "0008_decision_budget_exhausted")]

    operations = [
        migrations.AddField(
            model_name="publication",
            name="version",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.RunPython(add_view, remove_view),
    ]
