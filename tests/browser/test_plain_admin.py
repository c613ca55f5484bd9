"""The admin in plain words, on the demo in a real browser: an event's page titled by what was decided
with no History, a run's status once and its steps' receipts as tables, lists of names typed with
commas (an unknown one named, nothing saved), the model form's catalogue once, and "View site"
opening a page that exists."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from agents.models import AgentRun, RunStatus
from catalog.models import Configuration
from context_assembly.profiles import CATALOGUE
from governance.models import Draft, GovernanceEvent
from tests.browser.conftest import click_and_wait, screenshot
from tests.browser.test_demo import seed_demo

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo(browser, live_server):
    password = seed_demo()
    browser.get(f"{live_server.url}/admin/login/")
    browser.find_element(By.ID, "id_username").send_keys("admin")
    browser.find_element(By.ID, "id_password").send_keys(password)
    click_and_wait(browser, browser.find_element(By.CSS_SELECTOR, "input[type=submit]"))
    return browser


def labels(browser) -> list[str]:
    return [
        label.text.removesuffix(":") for label in browser.find_elements(By.CSS_SELECTOR, "fieldset label")
    ]


def test_an_events_page_reads_as_what_was_decided_and_has_no_history(demo, live_server):
    refusal = GovernanceEvent.objects.get(decision="context_blocked")
    demo.get(f"{live_server.url}/admin/governance/governanceevent/{refusal.pk}/change/")

    title = f"Context blocked (enforced): snippet {refusal.source_identifier}"
    assert demo.find_element(By.CSS_SELECTOR, "#content h2").text == title
    assert demo.find_element(By.CSS_SELECTOR, ".breadcrumbs").text.endswith(title)
    assert {"Recorded at", "Correlation ID", "API client", "Position in the chain", "Digest"} <= set(
        labels(demo)
    )
    assert demo.find_elements(By.CSS_SELECTOR, ".object-tools a.historylink") == []
    assert "HISTORY" not in demo.find_element(By.ID, "content").text.upper()
    screenshot(demo, "governance-event-page")


def test_a_runs_status_shows_once_and_its_steps_receipts_are_tables(demo, live_server):
    run = AgentRun.objects.get(status=RunStatus.COMPLETED, configuration__identifier="demo-assistant")
    demo.get(f"{live_server.url}/admin/agents/agentrun/{run.pk}/change/")

    assert demo.find_element(By.CSS_SELECTOR, "#content h2").text == f"run {run.pk}"
    fields = demo.find_element(By.CSS_SELECTOR, "fieldset.module").text
    assert fields.count("Completed") == 1 and "Termination reason" not in fields
    screenshot(demo, "run-page")

    step = run.steps.order_by("index").last()
    demo.get(f"{live_server.url}/admin/agents/agentstep/{step.pk}/change/")
    rows = demo.find_elements(By.CSS_SELECTOR, "table.receipt tr")
    table = {
        row.find_element(By.TAG_NAME, "th").text: row.find_element(By.TAG_NAME, "td").text for row in rows
    }
    assert table["Decision"] == step.receipt["decision_id"]
    assert table["Zone of the call"] == "Local" and table["Model"] == "local/local-echo"
    sources = demo.find_elements(By.CSS_SELECTOR, "table.receipt-sources tbody tr")
    assert len(sources) == len(step.receipt["sources"])
    assert '"decision_id"' not in demo.find_element(By.ID, "content").text
    screenshot(demo, "step-receipt")


def test_lists_of_names_are_typed_with_commas_and_an_unknown_one_is_named(demo, live_server):
    assistant = Configuration.objects.get(identifier="demo-assistant")
    demo.get(f"{live_server.url}/admin/catalog/configuration/{assistant.pk}/change/")
    tags = demo.find_element(By.ID, "id_snippet_tags")
    assert tags.get_attribute("value") == ", ".join(assistant.snippet_tags)
    tools = demo.find_element(By.ID, "id_allowed_tools")
    tools.clear()
    tools.send_keys("snippets_by_tag, transfer_funds")
    click_and_wait(demo, demo.find_element(By.NAME, "_continue"))

    error = demo.find_element(By.CSS_SELECTOR, ".field-allowed_tools ul.errorlist").text
    assert error.startswith("Unknown tools: transfer_funds. Known: ")
    assert not Draft.objects.exists()
    screenshot(demo, "configuration-list-fields")

    tools = demo.find_element(By.ID, "id_allowed_tools")
    tools.clear()
    tools.send_keys("snippets_by_tag")
    click_and_wait(demo, demo.find_element(By.NAME, "_continue"))
    assert Draft.objects.get().values["allowed_tools"] == ["snippets_by_tag"]
    assert demo.find_element(By.ID, "id_allowed_tools").get_attribute("value") == "snippets_by_tag"


def test_the_model_form_lists_the_catalogue_once_and_view_site_opens_a_page(demo, live_server):
    demo.get(f"{live_server.url}/admin/catalog/llmmodel/add/")
    listed = ", ".join(sorted(CATALOGUE))
    assert demo.find_element(By.ID, "content").text.count(listed) == 1
    screenshot(demo, "llm-model-form")

    click_and_wait(demo, demo.find_element(By.LINK_TEXT, "VIEW SITE"))
    assert demo.current_url == f"{live_server.url}/api/docs/"
    assert demo.title == "Governed context assembly API"
