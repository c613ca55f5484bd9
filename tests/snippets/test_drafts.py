"""Drafts and publishing in admin: a save proposes, Publish (its own permission) makes it live."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User

from governance.classified import Classification
from governance.drafts import classification_tightened
from governance.models import Draft, GovernanceEvent, Publication
from snippets.models import Snippet
from tests.editor_accounts import editor_make, snippet_admin_form
from tests.factories import snippet_make

pytestmark = pytest.mark.django_db

OLD = "Write warmly and briefly."
NEW = "Write warmly, briefly and concretely."


def live(snippet: Snippet) -> tuple[object, ...]:
    row = Snippet.objects.get(pk=snippet.pk)
    return (row.text, row.data_class, row.ceiling, row.enforcement, Snippet.history.filter(id=row.pk).count())


def change_url(snippet: Snippet, page: str = "change") -> str:
    return f"/admin/snippets/snippet/{snippet.pk}/{page}/"


@pytest.fixture
def snippet() -> Snippet:
    return snippet_make(identifier="tone-of-voice", text=OLD, tags=("tone",))


@pytest.fixture
def editor(client) -> User:
    user = editor_make()
    client.force_login(user)
    return user


def test_saving_stores_a_draft_and_leaves_the_live_row_and_its_history(client, editor, snippet):
    before = live(snippet)

    response = client.post(change_url(snippet), snippet_admin_form(snippet, text=NEW), follow=True)

    assert [str(m) for m in response.context["messages"]] == [
        "Saved as a draft: the live snippet is unchanged until the draft is published."
    ]
    assert live(snippet) == before
    draft = Draft.objects.get()
    assert (draft.values["text"], draft.values["tag_names"], draft.author, draft.author_label) == (
        NEW,
        "tone",
        editor,
        "user:editor",
    )
    page = client.get(change_url(snippet)).content.decode()
    assert NEW in page
    assert "This form shows a draft by user:editor" in page
    assert GovernanceEvent.objects.count() == 0


def test_a_second_save_replaces_the_draft(client, editor, snippet):
    client.post(change_url(snippet), snippet_admin_form(snippet, text=NEW))
    client.post(
        change_url(snippet), snippet_admin_form(snippet, text="Third wording.", tag_names="tone, legal")
    )

    assert Draft.objects.get().values["text"] == "Third wording."
    page = client.get(change_url(snippet)).content.decode()
    assert 'value="tone, legal"' in page


def test_the_publish_page_shows_the_changes_against_live_first(client, editor, snippet):
    client.post(change_url(snippet), snippet_admin_form(snippet, text=NEW, tag_names="tone, Legal"))

    response = client.get(change_url(snippet, "publish"))

    assert response.status_code == 200
    changes = {c.name: (c.live, c.draft) for c in response.context["changes"]}
    assert changes == {"text": (OLD, NEW), "tag_names": ("tone", "tone, legal")}
    assert live(snippet)[0] == OLD
    assert 'id="publish"' in response.content.decode()


def test_publishing_applies_the_draft_and_records_author_and_time(client, editor, snippet):
    client.post(change_url(snippet), snippet_admin_form(snippet, text=NEW, tag_names="tone, legal"))
    versions = live(snippet)[-1]

    response = client.post(change_url(snippet, "publish"))

    assert response.status_code == 302
    row = Snippet.objects.get(pk=snippet.pk)
    assert row.text == NEW
    assert sorted(row.tags.values_list("name", flat=True)) == ["legal", "tone"]
    version = row.history.latest("history_date")
    assert (version.history_user, version.history_change_reason) == (editor, "published")
    new_versions = Snippet.history.filter(id=row.pk).order_by("-history_id")[: live(snippet)[-1] - versions]
    assert {(v.history_user, v.history_change_reason, v.text) for v in new_versions} == {
        (editor, "published", NEW)
    }
    publication = Publication.objects.get()
    assert (publication.object_id, publication.object_repr, publication.author_label, publication.fields) == (
        str(row.pk),
        "tone-of-voice",
        "user:editor",
        ["tag_names", "text"],
    )
    assert publication.published_at is not None
    assert Draft.objects.count() == 0


def test_without_the_publish_permission_an_editor_sees_the_diff_but_cannot_publish(client, snippet):
    user = editor_make("writer")
    user.groups.clear()
    user.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label="snippets", codename__in=["change_snippet", "view_snippet"]
        )
    )
    client.force_login(user)
    client.post(change_url(snippet), snippet_admin_form(snippet, text=NEW))
    before = live(snippet)

    page = client.get(change_url(snippet, "publish"))
    refused = client.post(change_url(snippet, "publish"))

    assert 'id="publish-forbidden"' in page.content.decode()
    assert refused.status_code == 403
    assert live(snippet) == before
    assert Publication.objects.count() == 0
    assert Draft.objects.get().values["text"] == NEW


def test_discarding_drops_the_draft_and_leaves_live(client, editor, snippet):
    client.post(change_url(snippet), snippet_admin_form(snippet, text=NEW))
    before = live(snippet)

    assert client.get(change_url(snippet, "discard-draft")).status_code == 200
    assert Draft.objects.count() == 1
    response = client.post(change_url(snippet, "discard-draft"))

    assert response.status_code == 302
    assert Draft.objects.count() == 0
    assert live(snippet) == before
    assert Publication.objects.count() == 0
    assert OLD in client.get(change_url(snippet)).content.decode()


def test_a_stricter_classification_takes_effect_at_once_and_the_rest_waits(client, editor, snippet):
    client.post(
        change_url(snippet), snippet_admin_form(snippet, text=NEW, data_class="source_code", ceiling="local")
    )

    row = Snippet.objects.get(pk=snippet.pk)
    assert (row.text, row.data_class, row.ceiling) == (OLD, "source_code", "local")
    assert row.history.latest("history_date").history_change_reason == "classification tightened by a draft"
    assert GovernanceEvent.objects.get().reason == (
        "public_content/external_global/enforce -> source_code/local/enforce by user:editor"
    )
    assert Draft.objects.get().values["text"] == NEW


def test_publishing_without_a_draft_changes_nothing(client, editor, snippet):
    before = live(snippet)
    response = client.post(change_url(snippet, "publish"))
    assert response.status_code == 302
    assert live(snippet) == before
    assert Publication.objects.count() == 0


def test_creating_a_snippet_in_admin_is_live(client, editor):
    values = snippet_admin_form(Snippet(identifier="new", name="New", text=NEW, data_class="public_content",
                          ceiling="external_global", enforcement="enforce"))  # fmt: skip
    assert client.post("/admin/snippets/snippet/add/", values).status_code == 302
    assert Snippet.objects.get(identifier="new").text == NEW
    assert Draft.objects.count() == 0


@pytest.mark.parametrize(
    ("live_row", "proposed", "expected"),
    [
        # all of it, when nothing loosens
        (("public_content", "external_global", "enforce"), ("source_code", "local", "enforce"),
         ("source_code", "local", "enforce")),
        (("public_content", "external_global", "observe"), ("public_content", "external_global", "enforce"),
         ("public_content", "external_global", "enforce")),
        # a tighter ceiling goes live, a lowered class waits in the draft
        (("editor_content", "external_global", "enforce"), ("public_content", "external_eu", "enforce"),
         ("editor_content", "external_eu", "enforce")),
        # relaxing alone: nothing now
        (("public_content", "external_global", "enforce"), ("public_content", "external_global", "observe"), None),
        (("public_content", "external_global", "enforce"), ("public_content", "external_global", "enforce"), None),
    ],
)  # fmt: skip
def test_classification_tightened(live_row, proposed, expected):
    result = classification_tightened(Classification(*live_row), Classification(*proposed))
    assert result == (Classification(*expected) if expected else None)


def test_deleting_a_snippet_drops_its_draft(client, editor, snippet):
    client.post(change_url(snippet), snippet_admin_form(snippet, text=NEW))
    assert client.post(change_url(snippet, "delete"), {"post": "yes"}).status_code == 302
    assert Snippet.objects.count() == 0
    assert Draft.objects.count() == 0
