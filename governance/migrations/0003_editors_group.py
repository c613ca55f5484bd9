"""The ``editors`` group: what the people curating snippets and skills need in admin, and nothing more.

Editors write snippets and tags, review and classify skills, and read configurations (with the context
preview), runs, the governance event log and the readiness report. They get nothing on providers, LLM
models, API clients, tool settings or skill sources beyond viewing sources.

Model permissions are created after all migrations (post_migrate); this migration creates them first
so that it works on a fresh database, then sets the group's permissions to exactly this list.
"""

from django.db import migrations

GROUP = "editors"
READINESS = ("governance", "governanceevent", "view_readiness_report", "Can view the readiness report")
EDITOR_PERMISSIONS = {
    "snippets": (
        "add_snippet", "change_snippet", "delete_snippet", "view_snippet",
        "add_tag", "change_tag", "delete_tag", "view_tag",
        "view_historicalsnippet",
    ),
    "skills": ("view_skill", "change_skill", "view_historicalskill", "view_skillsource"),
    "agents": ("view_configuration", "view_configurationfallback", "view_agentrun", "view_agentstep"),
    "governance": ("view_governanceevent", "view_readiness_report"),
}  # fmt: skip


def _create_model_permissions(apps):
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        stub = not getattr(app_config, "models_module", None)
        if stub:  # historical app configs have no models module; create_permissions skips those
            app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        if stub:
            app_config.models_module = None


def add_editors_group(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    _create_model_permissions(apps)
    app_label, model, codename, name = READINESS
    content_type, _ = ContentType.objects.get_or_create(app_label=app_label, model=model)
    Permission.objects.get_or_create(content_type=content_type, codename=codename, defaults={"name": name})
    wanted = []
    for app_label, codenames in EDITOR_PERMISSIONS.items():
        found = list(Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames))
        missing = sorted(set(codenames) - {p.codename for p in found})
        if missing:
            raise RuntimeError(f"editors group: permissions missing in {app_label}: {', '.join(missing)}")
        wanted.extend(found)
    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.set(wanted)


def remove_editors_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()
    app_label, model, codename, _ = READINESS
    apps.get_model("auth", "Permission").objects.filter(
        content_type__app_label=app_label, content_type__model=model, codename=codename
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("governance", "0002_append_only_trigger"),
        ("snippets", "0002_snippet_classification"),
        ("skills", "0003_skill_audit_append_only_trigger"),
        ("agents", "0005_configuration_skills"),
    ]

    operations = [migrations.RunPython(add_editors_group, remove_editors_group)]
