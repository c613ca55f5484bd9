"""The live token badge (editors/admin/live_badge.py, editors/edit_effects.py): figures for text not yet
saved, from the same plan and fit a send uses; POST only, behind the admin and the kind's permission."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.runtime.plan import model_profile
from context_assembly.badges import token_badge
from editors.edit_effects import snippet_edit_effects
from governance.models import GovernanceEvent
from snippets.models import Snippet
from snippets.selectors import SnippetEdit, snippet_select
from tests.editor_accounts import editor_make
from tests.factories import configuration_make, model_make, snippet_make

pytestmark = pytest.mark.django_db

URL = "/admin/catalog/configuration/live-badge/"
LONGER = "Write warmly, briefly and concretely, and never promise dates you cannot keep."


def edit_of(snippet: Snippet, **fields) -> SnippetEdit:
    tags = fields.pop("tags", tuple(tag.name for tag in snippet.tags.all()))
    edited = Snippet(
        identifier=snippet.identifier, name=snippet.name, text=snippet.text, sorting=snippet.sorting,
        is_active=snippet.is_active, data_class=snippet.data_class, ceiling=snippet.ceiling,
    )  # fmt: skip
    for key, value in fields.items():
        setattr(edited, key, value)
    return SnippetEdit(snippet=edited, tags=tags)


def test_the_edit_is_selected_in_place_of_the_saved_row():
    snippet_make(identifier="a", name="A", text="First.", tags=("tone",), sorting=1)
    b = snippet_make(identifier="b", name="B", text="Second.", tags=("tone",), sorting=2)
    edit = edit_of(b, text="Second, edited.", sorting=0, tags=("Tone", "news"))

    selection = snippet_select(tags=["tone", "news", "ghost"], edits=[edit])

    assert [(s.identifier, s.text) for s in selection.snippets] == [("b", "Second, edited."), ("a", "First.")]
    assert (selection.unknown_tags, selection.empty_tags) == (("ghost",), ())
    assert Snippet.objects.get(identifier="b").text == "Second."  # nothing saved
    inactive = snippet_select(tags=["tone"], edits=[edit_of(b, is_active=False)])
    assert [s.identifier for s in inactive.snippets] == ["a"]


def test_after_the_edit_is_exactly_what_the_saved_edit_costs():
    snippet = snippet_make(identifier="tone", name="Tone", text="Warm.", tags=("tone",))
    configuration_make(identifier="newsletter", snippet_tags=["tone"])
    configuration_make(
        identifier="support", snippet_tags=["help", "tone"], model=model_make(context_window=16_000)
    )
    configuration_make(identifier="unrelated", snippet_tags=["legal"])

    [newsletter, support] = snippet_edit_effects(edit=edit_of(snippet, text=LONGER), saved_tags=["tone"])
    Snippet.objects.filter(pk=snippet.pk).update(text=LONGER)
    [saved_newsletter, saved_support] = snippet_edit_effects(
        edit=edit_of(Snippet.objects.get(pk=snippet.pk)), saved_tags=["tone"]
    )

    assert [newsletter.configuration, support.configuration] == ["newsletter", "support"]
    for effect, saved in ((newsletter, saved_newsletter), (support, saved_support)):
        assert effect.after == saved.before == saved.after
        assert effect.after.snippets > effect.before.snippets
        assert (
            effect.after.estimated - effect.before.estimated == effect.after.snippets - effect.before.snippets
        )
    assert support.before.budget < newsletter.before.budget


def test_moving_a_snippet_to_another_tag_shows_both_configurations():
    snippet = snippet_make(identifier="tone", name="Tone", text="Warm.", tags=("tone",))
    configuration_make(identifier="newsletter", snippet_tags=["tone"])
    configuration_make(identifier="support", snippet_tags=["help"])

    effects = snippet_edit_effects(edit=edit_of(snippet, tags=("help",)), saved_tags=["tone"])

    assert [(e.configuration, e.before.snippets > 0, e.after.snippets > 0) for e in effects] == [
        ("newsletter", True, False),
        ("support", False, True),
    ]


def test_the_endpoint_answers_the_badge_and_the_table_for_a_snippet(admin_client):
    snippet = snippet_make(identifier="tone", name="Tone", text="Warm.", tags=("tone",))
    configuration_make(identifier="newsletter", snippet_tags=["tone"])
    secret_ish = "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"

    response = admin_client.post(
        URL,
        {
            "kind": "snippet",
            "object_id": snippet.pk,
            "text": f"{LONGER} {secret_ish}",
            "name": "Tone",
            "tag_names": "tone",
        },
    )

    assert response.status_code == 200
    answer = response.json()
    assert answer["badge"] == {
        "label": token_badge(f"{LONGER} {secret_ish}").label,
        "tokens": token_badge(f"{LONGER} {secret_ish}").tokens,
    }
    [row] = answer["configurations"]
    expected = snippet_edit_effects(
        edit=edit_of(snippet, text=f"{LONGER} {secret_ish}"), saved_tags=["tone"]
    )[0]
    assert row == expected.as_dict()
    assert row["before"]["share"] == f"{expected.before.share:.2f}%"
    assert secret_ish not in response.content.decode() and "Warm" not in response.content.decode()
    assert Snippet.objects.get(pk=snippet.pk).text == "Warm."
    assert GovernanceEvent.objects.count() == 0


def test_an_empty_text_shows_the_dash_the_saved_page_shows(admin_client):
    response = admin_client.post(URL, {"kind": "snippet", "text": "", "name": "New", "tag_names": ""})
    assert response.json() == {"badge": {"label": "—", "tokens": None}, "configurations": []}


def test_a_system_prompt_is_counted_for_the_selected_model(admin_client):
    configuration = configuration_make(identifier="newsletter")
    small = model_make(context_window=8_000, model_id="small-model")
    text = "You write our newsletter, warmly."

    answer = admin_client.post(
        URL, {"kind": "configuration", "object_id": configuration.pk, "text": text, "model": small.pk}
    ).json()
    saved_model = admin_client.post(
        URL, {"kind": "configuration", "object_id": configuration.pk, "text": text}
    ).json()

    assert answer["badge"]["label"] == token_badge(text, model_profile(small)).label
    assert "of the 8,000-token window of small-model" in answer["badge"]["label"]
    assert saved_model["badge"]["label"] == token_badge(text, model_profile(configuration.model)).label


def test_the_saved_badges_show_on_both_change_forms_with_the_endpoint(admin_client):
    snippet = snippet_make(identifier="tone", name="Tone", text="Warm.", tags=("tone",))
    configuration = configuration_make(identifier="newsletter", system_prompt="Be kind.")

    snippet_page = admin_client.get(f"/admin/snippets/snippet/{snippet.pk}/change/").content.decode()
    configuration_page = admin_client.get(
        f"/admin/catalog/configuration/{configuration.pk}/change/"
    ).content.decode()

    assert token_badge("Warm.").label in snippet_page
    assert token_badge("Be kind.", model_profile(configuration.model)).label in configuration_page
    for page, kind, pk in (
        (snippet_page, "snippet", snippet.pk),
        (configuration_page, "configuration", configuration.pk),
    ):
        assert (
            f'<div id="live-badge" hidden data-kind="{kind}" data-object="{pk}" data-url="{URL}"></div>'
            in page
        )
        assert 'src="/static/context_assembly/live_token_badge.js"' in page


def test_the_text_never_travels_in_a_url():
    assert Client().get(URL, {"kind": "snippet", "text": "x"}).status_code == 302  # to the login page


def test_get_is_refused(admin_client):
    assert admin_client.get(URL, {"kind": "snippet", "text": "x"}).status_code == 405


def test_the_kinds_change_permission_is_required(client):
    configuration = configuration_make(identifier="newsletter")
    snippet = snippet_make(identifier="tone", name="Tone", text="Warm.", tags=("tone",))
    client.force_login(editor_make())  # editors change snippets; they only view configurations

    assert client.post(URL, {"kind": "snippet", "object_id": snippet.pk, "text": "x"}).status_code == 200
    assert client.post(URL, {"kind": "snippet", "text": "x"}).status_code == 200  # adding a snippet
    assert (
        client.post(URL, {"kind": "configuration", "object_id": configuration.pk, "text": "x"}).status_code
        == 403
    )
    staff = User.objects.create_user(username="staff", password="pw-" + "staff", is_staff=True)
    client.force_login(staff)
    assert client.post(URL, {"kind": "snippet", "object_id": snippet.pk, "text": "x"}).status_code == 403


def test_a_post_without_the_csrf_token_is_refused():
    client = Client(enforce_csrf_checks=True)
    client.force_login(User.objects.create_superuser(username="root", password="pw-" + "root"))
    response = client.post(URL, {"kind": "snippet", "text": "x"})
    assert response.status_code == 403
    assert b"CSRF" in response.content


def test_an_unknown_kind_is_a_400_naming_the_field(admin_client):
    response = admin_client.post(URL, {"kind": "skill", "text": "x"})
    assert response.status_code == 400
    assert response.json()["code"] == "invalid" and "kind" in response.json()["extra"]


def test_a_new_snippet_shows_what_adding_it_would_cost(admin_client):
    configuration_make(identifier="newsletter", snippet_tags=["tone"])

    answer = admin_client.post(
        URL, {"kind": "snippet", "identifier": "fresh", "name": "Fresh", "text": LONGER, "tag_names": "Tone"}
    ).json()

    [row] = answer["configurations"]
    assert (row["configuration"], row["before"]["snippets"]) == ("newsletter", 0)
    assert row["after"]["snippets"] > 0
    assert not Snippet.objects.exists()
