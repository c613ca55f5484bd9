"""Lists of names stored as JSON (a configuration's snippet tags, allowed tool groups and tools, an API
client's scopes) are typed and shown as a snippet's tags are: names separated by commas. An unknown
name is a form error naming it, and nothing is stored."""

from __future__ import annotations

import pytest

from catalog.models import ApiClient, Configuration
from catalog.services import api_client_create
from governance.models import Draft
from tests.editors.test_configuration_skill_drafts import form, publisher  # noqa: F401
from tests.factories import configuration_make
from tools.models import McpServer

pytestmark = pytest.mark.django_db


def change_url(configuration: Configuration) -> str:
    return f"/admin/catalog/configuration/{configuration.pk}/change/"


def test_the_configuration_form_shows_its_lists_as_names_separated_by_commas(client, publisher):  # noqa: F811
    configuration = configuration_make(snippet_tags=["tone", "legal"])
    Configuration.objects.filter(pk=configuration.pk).update(
        allowed_tool_groups=["content"], allowed_tools=["snippets_by_tag", "notify_editors"]
    )
    html = client.get(change_url(configuration)).content.decode()
    assert 'name="snippet_tags" value="tone, legal"' in html
    assert 'name="allowed_tool_groups" value="content"' in html
    assert 'name="allowed_tools" value="snippets_by_tag, notify_editors"' in html
    assert "[&quot;" not in html.split('name="snippet_tags"')[1].split(">")[0]


def test_names_typed_with_commas_are_drafted_as_lists(client, publisher):  # noqa: F811
    configuration = configuration_make(snippet_tags=["tone"])
    McpServer.objects.create(
        name="wiki", transport="streamable_http", url="http://127.0.0.1:9/mcp", trust_zone="local",
        data_class="public_content",
    )  # fmt: skip
    values = form(
        configuration,
        snippet_tags=" Tone of Voice, legal,, tone-of-voice ",
        allowed_tool_groups="content, mcp:wiki",
        allowed_tools="snippets_by_tag, mcp__wiki__search",
    )
    response = client.post(change_url(configuration), values)
    assert response.status_code == 302, response.context["adminform"].form.errors
    draft = Draft.objects.get()
    assert draft.values["snippet_tags"] == ["tone-of-voice", "legal"]
    assert draft.values["allowed_tool_groups"] == ["content", "mcp:wiki"]
    assert draft.values["allowed_tools"] == ["snippets_by_tag", "mcp__wiki__search"]


def test_a_json_list_is_still_read(client, publisher):  # noqa: F811
    configuration = configuration_make(snippet_tags=["tone"])
    response = client.post(change_url(configuration), form(configuration, allowed_tool_groups='["content"]'))
    assert response.status_code == 302
    assert Draft.objects.get().values["allowed_tool_groups"] == ["content"]


@pytest.mark.parametrize(
    ("field", "typed", "error"),
    [
        (
            "allowed_tools",
            "snippets_by_tag, send_money, mcp__ghost__x",
            "Unknown tools: send_money, mcp__ghost__x.",
        ),
        ("allowed_tool_groups", "content, banking", "Unknown tool groups: banking. Known: "),
        ("snippet_tags", "tone, " + "t" * 65, "Unknown tags (longer than 64 characters): " + "t" * 65 + "."),
        ("allowed_tools", '["snippets_by_tag", 3]', "Write the tools separated by commas"),
    ],
)
def test_an_unknown_name_is_a_form_error_naming_it_and_nothing_is_stored(
    client,
    publisher,  # noqa: F811
    field,
    typed,
    error,
):
    configuration = configuration_make(snippet_tags=["tone"])
    response = client.post(change_url(configuration), form(configuration, **{field: typed}))
    assert response.status_code == 200
    [message] = response.context["adminform"].form.errors[field]
    assert message.startswith(error)
    assert not Draft.objects.exists()
    live = Configuration.objects.get(pk=configuration.pk)
    assert (live.snippet_tags, live.allowed_tool_groups, live.allowed_tools) == (["tone"], [], [])


def client_form(**changes: str) -> dict[str, str]:
    values = {
        "name": "consumer", "scopes": "snippets:read", "default_input_data_class": "editor_content",
        "trust_zone": "external_global", "is_active": "on",
    }  # fmt: skip
    return {**values, **changes}


def test_an_api_clients_scopes_are_names_separated_by_commas(admin_client):
    issued = api_client_create(name="consumer", scopes=["snippets:read", "runs:read"])
    url = f"/admin/catalog/apiclient/{issued.client.pk}/change/"
    assert 'name="scopes" value="runs:read, snippets:read"' in admin_client.get(url).content.decode()
    listing = admin_client.get("/admin/catalog/apiclient/").content.decode()
    assert '<td class="field-scope_list">runs:read, snippets:read</td>' in listing

    assert admin_client.post(url, client_form(scopes="runs:create, runs:read")).status_code == 302
    assert ApiClient.objects.get(pk=issued.client.pk).scopes == ["runs:create", "runs:read"]


def test_an_unknown_scope_is_named_and_the_scopes_stay_as_they_were(admin_client):
    issued = api_client_create(name="consumer", scopes=["snippets:read"])
    url = f"/admin/catalog/apiclient/{issued.client.pk}/change/"
    response = admin_client.post(url, client_form(scopes="snippets:read, everything, admin"))
    assert response.status_code == 200
    [message] = response.context["adminform"].form.errors["scopes"]
    assert message.startswith("Unknown scopes: everything, admin. Known: snippets:read, snippets:write")
    assert ApiClient.objects.get(pk=issued.client.pk).scopes == ["snippets:read"]


def test_the_publish_page_shows_a_drafted_list_as_names(client, publisher):  # noqa: F811
    configuration = configuration_make(snippet_tags=["tone"])
    client.post(change_url(configuration), form(configuration, snippet_tags="tone, legal"))
    html = client.get(f"/admin/catalog/configuration/{configuration.pk}/publish/").content.decode()
    row = html.split('<tr data-field="snippet_tags">')[1].split("</tr>")[0]
    assert '<td class="live"><pre>tone</pre></td>' in row
    assert '<td class="draft"><pre>tone<ins class="diff-add">, legal</ins></pre></td>' in row
