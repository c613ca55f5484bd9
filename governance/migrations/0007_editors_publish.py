"""Editors publish drafts: ``snippets.publish_snippet`` and ``agents.publish_configuration`` join the
``editors`` group (publishing a configuration also needs its change permission, which editors lack)."""

from django.db import migrations

GROUP = "editors"
PUBLISH = (("snippets", "publish_snippet"), ("agents", "publish_configuration"))


def _create_model_permissions(apps):
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        stub = not getattr(app_config, "models_module", None)
        if stub:  # historical app configs have no models module; create_permissions skips those
            app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        if stub:
            app_config.models_module = None


def add_publish(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    _create_model_permissions(apps)
    group, _ = Group.objects.get_or_create(name=GROUP)
    for app_label, codename in PUBLISH:
        group.permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))


def remove_publish(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for group in Group.objects.filter(name=GROUP):
        for app_label, codename in PUBLISH:
            group.permissions.remove(
                *Permission.objects.filter(content_type__app_label=app_label, codename=codename)
            )


class Migration(migrations.Migration):
    dependencies = [
        ("governance", "0006_drafts"),
        ("snippets", "0003_publish_permission"),
        ("agents", "0015_publish_permission"),
    ]

    operations = [migrations.RunPython(add_publish, remove_publish)]
