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
