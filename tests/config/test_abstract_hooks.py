"""The two base classes with a hook each subclass must implement refuse a subclass without it when it
is instantiated (registered with the admin site, or routed), not at the first request that needs it."""

from __future__ import annotations

import pytest
from django.contrib import admin

from config.api import ListApi
from governance.drafts_admin import DraftAdmin
from snippets.models import Snippet


def test_a_draft_admin_without_live_save_cannot_be_instantiated():
    class WithoutLiveSave(DraftAdmin):
        publish_permission = "snippets.publish_snippet"

    with pytest.raises(TypeError, match="live_save"):
        WithoutLiveSave(Snippet, admin.AdminSite(name="hooks"))


def test_a_list_api_without_rows_cannot_be_instantiated():
    class WithoutRows(ListApi):
        pass

    with pytest.raises(TypeError, match="rows"):
        WithoutRows()
