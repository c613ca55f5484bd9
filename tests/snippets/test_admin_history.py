"""Snippet versions: a readable, escaped text diff against the previous version, and revert."""

from __future__ import annotations

import pytest

from config.admin_history import render_diff, unified_diff
from snippets.models import Snippet
from snippets.services import snippet_save
from tests.factories import TEST_ACTOR, snippet_make


def test_unified_diff_lists_changed_lines_only():
    assert unified_diff("a\nb\nc", "a\nB\nc", old_label="v1", new_label="v2") == [
        "--- v1", "+++ v2", "@@ -1,3 +1,3 @@", " a", "-b", "+B", " c",
    ]  # fmt: skip
    assert unified_diff("same", "same", old_label="v1", new_label="v2") == []


def test_rendered_diff_escapes_every_line():
    html = render_diff(["--- v1", "+++ v2", "@@ -1 +1 @@", "-<script>x</script>", "+ok"])
    assert "<script>" not in html
    assert '<span class="diff-del" style="background:#ffeef0">-&lt;script&gt;x&lt;/script&gt;</span>' in html
    assert "<summary>+1 -1 lines</summary>" in html


@pytest.mark.django_db
def test_history_page_shows_each_versions_diff(admin_client):
    snippet = snippet_make(identifier="voice", text="Be warm.\nBe brief.")
    snippet.text = "Be warm.\nBe <em>very</em> brief."
    snippet_save(snippet=snippet, actor=TEST_ACTOR, reason="edited")

    html = admin_client.get(f"/admin/snippets/snippet/{snippet.pk}/history/").content.decode()

    assert "-Be brief." in html
    assert "+Be &lt;em&gt;very&lt;/em&gt; brief." in html
    assert "first version" in html
    assert "Choose a date from the list below to revert" in html


@pytest.mark.django_db
def test_revert_makes_a_draft_and_publishing_restores_the_text_through_the_service(admin_client, admin_user):
    snippet = snippet_make(identifier="voice", text="first wording", tags=("tone",))
    first = snippet.history.earliest("history_date")
    snippet.text = "second wording"
    snippet_save(snippet=snippet, actor=TEST_ACTOR, reason="edited")
    form = {
        "identifier": "voice", "name": snippet.name, "description": "", "text": "first wording",
        "tag_names": "tone", "is_active": "on", "sorting": "0", "data_class": "public_content",
        "ceiling": "external_global", "enforcement": "enforce", "metadata": "{}",
    }  # fmt: skip

    response = admin_client.post(f"/admin/snippets/snippet/{snippet.pk}/history/{first.history_id}/", form)

    assert response.status_code == 302
    assert Snippet.objects.get(pk=snippet.pk).text == "second wording"  # reverting proposes a draft
    assert admin_client.post(f"/admin/snippets/snippet/{snippet.pk}/publish/").status_code == 302
    snippet = Snippet.objects.get(pk=snippet.pk)
    assert snippet.text == "first wording"
    latest = snippet.history.latest("history_date")
    assert (latest.text, latest.history_user) == ("first wording", admin_user)
