"""Snippets that predate classification observe; snippets created afterwards enforce and need a class."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from tests.migration_helpers import migrate_to, migrate_to_latest


@pytest.mark.django_db(transaction=True)
def test_existing_snippets_become_observe_and_new_ones_enforce():
    old_apps = migrate_to([("snippets", "0001_initial")])
    old_apps.get_model("snippets", "Snippet").objects.create(identifier="legacy", name="Legacy", text="Old")

    new_apps = migrate_to([("snippets", "0002_snippet_classification")])
    Snippet = new_apps.get_model("snippets", "Snippet")
    legacy = Snippet.objects.get(identifier="legacy")
    assert (legacy.enforcement, legacy.data_class, legacy.ceiling) == ("observe", "", "")

    fresh = Snippet(identifier="fresh", name="Fresh", text="New")
    assert fresh.enforcement == "enforce"
    with pytest.raises(IntegrityError), transaction.atomic():
        fresh.save()
    assert not Snippet.objects.filter(identifier="fresh").exists()
    fresh.data_class, fresh.ceiling = "editor_content", "external_global"
    fresh.save()
    assert Snippet.objects.get(identifier="fresh").enforcement == "enforce"
    migrate_to_latest()
