"""The publish page reads well: live and draft side by side at full width, the changed words marked,
every text escaped, and vocabulary values shown by their labels."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from governance.vocabulary import DataClass, TrustZone
from tests.editor_accounts import editor_make, snippet_admin_form
from tests.factories import snippet_make

pytestmark = pytest.mark.django_db

OLD = "Write warmly and briefly. Sign every issue with the team's name."
NEW = "Write warmly, briefly and <b>concretely</b>. Sign every issue with the team's name."


def publish_page(client, user=None, **changes: str) -> str:
    snippet = snippet_make(
        identifier="tone-of-voice", text=OLD, tags=("tone",), data_class=DataClass.PUBLIC_CONTENT,
        ceiling=TrustZone.EXTERNAL_EU,
    )  # fmt: skip
    client.force_login(user or editor_make())
    url = f"/admin/snippets/snippet/{snippet.pk}"
    assert client.post(f"{url}/change/", snippet_admin_form(snippet, **changes)).status_code == 302
    response = client.get(f"{url}/publish/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_changed_words_are_marked_on_each_side_and_escaped(client):
    html = publish_page(client, text=NEW)

    live = (
        '<td class="live"><pre>Write warmly and <del class="diff-del">briefly.</del> '
        "Sign every issue with the team&#x27;s name.</pre></td>"
    )
    draft = (
        '<td class="draft"><pre>Write warmly<ins class="diff-add">, briefly</ins> and '
        '<ins class="diff-add">&lt;b&gt;concretely&lt;/b&gt;.</ins> Sign every issue with the team&#x27;s '
        "name.</pre></td>"
    )
    assert live in html and draft in html
    # Removed: "briefly"; added: "briefly", "b", "concretely", "b".
    assert '<span class="counts">1 word removed, 4 added</span>' in html
    assert "<b>concretely</b>" not in html
    assert "table.draft-changes td { vertical-align: top; width: 50%; }" in html


def test_a_loosened_ceiling_shows_the_labels_editors_chose_from(client):
    # Loosening is privileged and waits for publishing (a stricter change applies at once).
    owner = User.objects.create_superuser(username="owner", password="pw-" + "owner")
    html = publish_page(client, user=owner, ceiling=TrustZone.EXTERNAL_GLOBAL)

    assert '<tr data-field="ceiling">' in html
    assert (
        '<td class="live"><pre>External (<del class="diff-del">EU</del>)</pre></td>'
        '\n      <td class="draft"><pre>External (<ins class="diff-add">global</ins>)</pre></td>'
    ) in html
    assert "external_eu" not in html and "external_global" not in html
