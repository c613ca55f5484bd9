"""Two admin paths that change what configurations send at once, with no draft: deleting a snippet and
renaming or deleting a tag. Both need the permission to publish snippets, and with it they show the
what-if page (which configurations would stop or start sending which snippets, and the verdicts that
change) before anything changes."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User

from editors.admin.what_if_page import CONFIRM_FIELD
from governance.models import GovernanceEvent
from snippets.models import Snippet, Tag
from tests import factories
from tests.editor_accounts import EDITOR_PASSWORD

# What is stored (or not) is checked on both databases.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("on_both_databases")]


@pytest.fixture
def world():
    """``newsletter`` selects ``tone`` and ``voice``; ``handbook`` selects ``tone``. Snippet ``tone``
    carries the tag ``tone``."""
    snippet = factories.snippet_make(identifier="tone", tags=("tone",))
    factories.configuration_make(identifier="handbook", snippet_tags=["tone"])
    factories.configuration_make(identifier="newsletter", snippet_tags=["voice", "tone"])
    return snippet


def staff_with(*codenames: str) -> User:
    user = User.objects.create_user(username="curator", password=EDITOR_PASSWORD, is_staff=True)
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="snippets", codename__in=codenames)
    )
    return user


def selections(page) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    return [(e.configuration, e.leaving, e.joining) for e in page.context["effect"].selections]


def tag_url(tag: Tag, view: str = "change") -> str:
    return f"/admin/snippets/tag/{tag.pk}/{view}/"


def snippet_delete_url(snippet: Snippet) -> str:
    return f"/admin/snippets/snippet/{snippet.pk}/delete/"


def test_a_user_who_may_not_publish_cannot_delete_a_snippet(client, world):
    client.force_login(staff_with("view_snippet", "change_snippet", "delete_snippet"))

    response = client.post(snippet_delete_url(world), {"post": "yes"})

    assert response.status_code == 403
    assert Snippet.objects.filter(pk=world.pk).exists()
    assert GovernanceEvent.objects.count() == 0


@pytest.mark.parametrize("view", ["change", "delete"])
def test_a_user_who_may_not_publish_cannot_rename_or_delete_a_tag(client, world, view):
    tag = Tag.objects.get(name="tone")
    client.force_login(staff_with("view_tag", "change_tag", "delete_tag", "add_tag"))

    body = {"name": "voice", "_save": "Save"} if view == "change" else {"post": "yes"}
    response = client.post(tag_url(tag, view), body)

    assert response.status_code == 403
    assert list(Tag.objects.values_list("name", flat=True)) == ["tone"]
    assert list(world.tags.values_list("name", flat=True)) == ["tone"]


def test_a_tag_rename_shows_what_each_configuration_would_send_and_renames_only_on_confirmation(
    admin_client, world
):
    tag = Tag.objects.get(name="tone")
    posted = {"name": "Voice", "_save": "Save"}

    page = admin_client.post(tag_url(tag), posted)

    assert page.context["title"] == "What if: tag tone renamed to voice"
    assert selections(page) == [("handbook", ("tone",), ())]  # newsletter selects voice: it keeps it
    assert list(Tag.objects.values_list("name", flat=True)) == ["tone"]

    done = admin_client.post(tag_url(tag), {**posted, CONFIRM_FIELD: page.context["effect"].digest})

    assert done.status_code == 302
    assert list(Tag.objects.values_list("name", flat=True)) == ["voice"]


def test_a_tag_deletion_shows_what_leaves_sends_before_deleting(admin_client, world):
    tag = Tag.objects.get(name="tone")

    page = admin_client.post(tag_url(tag, "delete"), {"post": "yes"})

    assert page.context["title"] == "What if: tag tone deleted"
    assert selections(page) == [("handbook", ("tone",), ()), ("newsletter", ("tone",), ())]
    assert Tag.objects.filter(pk=tag.pk).exists()
    done = admin_client.post(
        tag_url(tag, "delete"), {"post": "yes", CONFIRM_FIELD: page.context["effect"].digest}
    )
    assert done.status_code == 302
    assert not Tag.objects.filter(pk=tag.pk).exists()


def test_a_snippet_deletion_shows_what_leaves_sends_before_deleting(admin_client, world):
    page = admin_client.post(snippet_delete_url(world), {"post": "yes"})

    assert page.context["title"] == "What if: snippet tone deleted"
    assert selections(page) == [("handbook", ("tone",), ()), ("newsletter", ("tone",), ())]
    assert b'value="Delete it"' in page.content
    assert Snippet.objects.filter(pk=world.pk).exists()
    done = admin_client.post(
        snippet_delete_url(world), {"post": "yes", CONFIRM_FIELD: page.context["effect"].digest}
    )
    assert done.status_code == 302
    assert not Snippet.objects.filter(pk=world.pk).exists()


@pytest.mark.parametrize("changelist", ["/admin/snippets/snippet/", "/admin/snippets/tag/"])
def test_the_bulk_delete_action_which_would_skip_the_page_is_not_offered(admin_client, world, changelist):
    response = admin_client.get(changelist)

    form = response.context["action_form"]  # None when no action is left
    offered = dict(form.fields["action"].choices) if form is not None else {}
    assert response.status_code == 200
    assert "delete_selected" not in offered
