"""Change lists of drafted rows: a "has draft" column and filter."""

from __future__ import annotations

import pytest

from governance.actors import Actor
from governance.drafts import draft_save
from tests.editor_accounts import editor_make
from tests.factories import configuration_make, snippet_make

pytestmark = pytest.mark.django_db

YES = '<img src="/static/admin/img/icon-yes.svg" alt="True">'
NO = '<img src="/static/admin/img/icon-no.svg" alt="False">'


@pytest.fixture
def editor(client):
    user = editor_make()
    client.force_login(user)
    return user


def listed(client, url: str) -> dict[str, bool]:
    response = client.get(url)
    assert response.status_code == 200
    return {str(row): bool(row.has_draft) for row in response.context["cl"].result_list}


@pytest.mark.parametrize("kind", ["snippet", "configuration"])
def test_the_change_list_shows_and_filters_which_rows_have_a_draft(client, editor, kind):
    if kind == "snippet":
        drafted, plain = snippet_make(identifier="drafted"), snippet_make(identifier="plain")
        url = "/admin/snippets/snippet/"
    else:
        drafted, plain = configuration_make(identifier="drafted"), configuration_make(identifier="plain")
        url = "/admin/catalog/configuration/"
    draft_save(row=drafted, values={"name": "Changed"}, actor=Actor.of_user(editor))

    assert listed(client, url) == {str(drafted): True, str(plain): False}
    assert listed(client, url + "?has_draft=yes") == {str(drafted): True}
    assert listed(client, url + "?has_draft=no") == {str(plain): False}
    html = client.get(url).content.decode()
    assert 'column-has_draft">' in html and "Draft</a></div>" in html
    assert f'<td class="field-has_draft">{YES}</td>' in html
    assert f'<td class="field-has_draft">{NO}</td>' in html
    assert 'href="?has_draft=yes"' in html
