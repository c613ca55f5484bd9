"""Publications in admin: read-only, filterable by type and author, linked from the published row."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType

from governance.actors import Actor
from governance.drafts import draft_save
from governance.models import Publication
from snippets.models import Snippet
from tests.editor_accounts import editor_make, snippet_admin_form
from tests.factories import configuration_make, snippet_make

pytestmark = pytest.mark.django_db

LIST = "/admin/governance/publication/"


def publish_snippet(client, snippet: Snippet, text: str) -> Publication:
    url = f"/admin/snippets/snippet/{snippet.pk}"
    assert client.post(f"{url}/change/", snippet_admin_form(snippet, text=text)).status_code == 302
    assert client.post(f"{url}/publish/").status_code == 302
    return Publication.objects.latest("id")


@pytest.fixture
def editor(client) -> User:
    user = editor_make()
    client.force_login(user)
    return user


def listed(client, query: str = "") -> list[tuple[str, str, str, int | None]]:
    response = client.get(LIST + query)
    assert response.status_code == 200
    return [
        (p.author_label, p.content_type.model, p.object_repr, p.version)
        for p in response.context["cl"].result_list
    ]


def test_a_publish_is_listed_with_author_time_object_and_the_history_version_it_created(client, editor):
    snippet = snippet_make(identifier="tone-of-voice", text="Warm.", tags=("tone",))
    publication = publish_snippet(client, snippet, "Warmer.")

    version = Snippet.history.filter(id=snippet.pk).latest("history_id")
    assert (publication.version, version.history_change_reason) == (version.history_id, "published")
    assert listed(client) == [("user:editor", "snippet", "tone-of-voice", version.history_id)]
    html = client.get(LIST).content.decode()
    assert f'<a href="/admin/snippets/snippet/{snippet.pk}/change/">tone-of-voice</a>' in html
    history = f"/admin/snippets/snippet/{snippet.pk}/history/{version.history_id}/"
    assert f'<a href="{history}">{version.history_id}</a>' in html
    assert client.get(history).status_code == 200
    assert "text" in html  # the fields published, by name


def test_the_list_filters_by_type_and_by_author(client, editor):
    snippet = snippet_make(identifier="tone-of-voice", tags=("tone",))
    publish_snippet(client, snippet, "Warmer.")
    other = editor_make("other")
    client.force_login(other)
    publish_snippet(client, Snippet.objects.get(pk=snippet.pk), "Warmest.")
    configuration = configuration_make(identifier="newsletter")
    Publication.objects.create(
        content_type=ContentType.objects.get_for_model(configuration), object_id=str(configuration.pk),
        object_repr="newsletter", author_label="user:editor", fields=["system_prompt"],
    )  # fmt: skip
    snippets = ContentType.objects.get_for_model(Snippet).pk

    assert [row[:3] for row in listed(client, f"?content_type__id__exact={snippets}")] == [
        ("user:other", "snippet", "tone-of-voice"), ("user:editor", "snippet", "tone-of-voice"),
    ]  # fmt: skip
    assert [row[:3] for row in listed(client, "?author_label=user%3Aeditor")] == [
        ("user:editor", "configuration", "newsletter"), ("user:editor", "snippet", "tone-of-voice"),
    ]  # fmt: skip
    html = client.get(LIST).content.decode()
    assert "By content type" in html and "By author label" in html


def test_publications_cannot_be_added_changed_or_deleted_in_admin(client, editor):
    snippet = snippet_make(identifier="tone-of-voice", tags=("tone",))
    publication = publish_snippet(client, snippet, "Warmer.")
    admin = User.objects.create_superuser("root", password="x" * 12)
    client.force_login(admin)

    assert client.get(LIST + "add/").status_code == 403
    assert client.get(f"{LIST}{publication.pk}/delete/").status_code == 403
    page = client.get(f"{LIST}{publication.pk}/change/")
    assert page.status_code == 200 and 'name="_save"' not in page.content.decode()
    assert client.post(f"{LIST}{publication.pk}/change/", {"author_label": "someone"}).status_code == 403
    assert Publication.objects.get(pk=publication.pk).author_label == "user:editor"


@pytest.mark.parametrize("kind", ["snippet", "configuration"])
def test_the_change_page_links_to_its_publications(client, editor, kind):
    row = (
        snippet_make(identifier="tone-of-voice")
        if kind == "snippet"
        else configuration_make(identifier="news")
    )
    other = snippet_make(identifier="other")
    for published in (row, other):
        Publication.objects.create(
            content_type=ContentType.objects.get_for_model(published), object_id=str(published.pk),
            object_repr=str(published), author_label="user:editor", fields=["name"],
        )  # fmt: skip
    app = "snippets" if kind == "snippet" else "catalog"

    page = client.get(f"/admin/{app}/{kind}/{row.pk}/change/").content.decode()

    content_type = ContentType.objects.get_for_model(row).pk
    url = f"{LIST}?content_type__id__exact={content_type}&amp;object_id={row.pk}"
    assert f'<a href="{url}" id="publications-link">Publications</a>' in page
    assert [r[2] for r in listed(client, f"?content_type__id__exact={content_type}&object_id={row.pk}")] == [
        str(row)
    ]


def test_a_draft_is_not_a_publication(client, editor):
    snippet = snippet_make(identifier="tone-of-voice")
    draft_save(row=snippet, values={"name": "Changed"}, actor=Actor.of_user(editor))
    assert listed(client) == []
