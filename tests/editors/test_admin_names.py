"""The admin names the product in its header and title, and its models as people write them."""

from __future__ import annotations

import pytest

from agents.models import AgentRun
from governance.vocabulary import DataClass
from tests.factories import configuration_make

pytestmark = pytest.mark.django_db


def test_the_header_title_and_index_name_the_product(admin_client):
    html = admin_client.get("/admin/").content.decode()
    assert '<div id="site-name"><a href="/admin/">Governed context assembly</a></div>' in html
    assert "<title>Snippets, skills, configurations and runs | Governed context assembly</title>" in html
    assert "Django administration" not in html and "Django site admin" not in html


def test_models_and_fields_are_named_as_people_write_them(admin_client):
    html = admin_client.get("/admin/").content.decode()
    assert '<a href="/admin/catalog/apiclient/">API clients</a>' in html
    assert '<a href="/admin/catalog/llmmodel/">LLM models</a>' in html
    assert "Api clients" not in html and "Llm models" not in html
    run = AgentRun.objects.create(
        configuration=configuration_make(), input_text="Go.", input_data_class=DataClass.PUBLIC_CONTENT
    )
    page = admin_client.get(f"/admin/agents/agentrun/{run.pk}/change/").content.decode()
    assert "<label>API client:</label>" in page and "Api client" not in page


def test_the_login_lockout_section_reads_as_what_it_is(admin_client):
    html = admin_client.get("/admin/").content.decode()
    assert 'title="Models in the Login lockouts application">Login lockouts</a>' in html
    assert ">Axes</a>" not in html


def test_sections_are_not_named_as_their_models(admin_client):
    html = admin_client.get("/admin/snippets/snippet/").content.decode()
    breadcrumbs = html.split('<div class="breadcrumbs">')[1].split("</div>")[0]
    assert '<a href="/admin/snippets/">Snippets and tags</a>' in breadcrumbs
    assert (
        "Snippets\n&rsaquo; Snippets" not in breadcrumbs and "Snippets &rsaquo; Snippets" not in breadcrumbs
    )
    index = admin_client.get("/admin/").content.decode()
    for section in ("Snippets and tags", "Skills and their sources", "Evaluation cases and results"):
        assert f'title="Models in the {section} application">{section}</a>' in index


def test_view_site_opens_the_api_documentation_which_exists(admin_client):
    html = admin_client.get("/admin/").content.decode()
    assert '<a href="/api/docs/">View site</a>' in html
    assert admin_client.get("/api/docs/").status_code == 200
    assert admin_client.get("/").status_code == 404  # where it pointed before


def test_the_model_form_lists_the_catalogue_once(admin_client):
    from context_assembly.profiles import CATALOGUE

    html = admin_client.get("/admin/catalog/llmmodel/add/").content.decode()
    listed = ", ".join(sorted(CATALOGUE))
    assert html.count(listed) == 1
    assert html.count("Leave empty for a model of the catalogue (listed above).") == 3
