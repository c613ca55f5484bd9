"""Before a stricter class in a real browser: the what-if page lists what it would refuse, confirming
saves the change, cancelling leaves the snippet as it was."""

from __future__ import annotations

import re

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from agents.models import AgentRun
from catalog.models import Configuration
from catalog.services import api_client_create
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from snippets.models import Snippet
from tests.browser.conftest import click_and_wait, screenshot
from tests.browser.test_demo import seed_demo
from tests.browser.test_editor_admin import external_configuration, log_in
from tests.editor_accounts import editor_make
from tests.factories import configuration_make, snippet_make

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def tone_in_use() -> Snippet:
    """``tone-of-voice`` (public) is sent by ``newsletter`` (external_global, used by the client ``crm``)
    and by ``handbook`` (local)."""
    newsletter = external_configuration()
    configuration_make(identifier="handbook", zone=TrustZone.LOCAL, snippet_tags=["tone"])
    api_client_create(
        name="crm", scopes=["runs:create"], configurations=[newsletter], trust_zone=TrustZone.EXTERNAL_GLOBAL
    )
    return snippet_make(
        identifier="tone-of-voice", name="Tone of voice", text="Write warmly.", tags=("tone",),
        data_class=DataClass.PUBLIC_CONTENT, ceiling=TrustZone.EXTERNAL_GLOBAL,
    )  # fmt: skip


def edit_class_upward(browser, live_server, snippet: Snippet) -> None:
    browser.get(f"{live_server.url}/admin/snippets/snippet/{snippet.pk}/change/")
    Select(browser.find_element(By.ID, "id_data_class")).select_by_value(DataClass.SOURCE_CODE)
    Select(browser.find_element(By.ID, "id_ceiling")).select_by_value(TrustZone.EXTERNAL_EU)
    click_and_wait(browser, browser.find_element(By.NAME, "_continue"))


def stored(snippet: Snippet) -> tuple[str, str]:
    return Snippet.objects.values_list("data_class", "ceiling").get(pk=snippet.pk)


def test_a_stricter_class_shows_what_it_would_refuse_and_saves_on_confirmation(browser, live_server):
    editor_make()
    snippet = tone_in_use()
    run = AgentRun.objects.create(
        configuration=Configuration.objects.get(identifier="newsletter"), input_text="Go.",
        input_data_class=DataClass.PUBLIC_CONTENT, receiver_zone=TrustZone.EXTERNAL_GLOBAL,
    )  # fmt: skip
    log_in(browser, live_server)

    edit_class_upward(browser, live_server, snippet)

    assert browser.find_element(By.TAG_NAME, "h1").text == (
        "What if: tone-of-voice: data class Public content → Source code, "
        "ceiling External (global) → External (EU)"
    )
    rows = browser.find_elements(By.CSS_SELECTOR, "#what-if-sends tbody tr")
    assert [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")][:5] for row in rows] == [
        ["newsletter", "External (global)", "none: the provider call", "Allowed", "Refused"],
        ["newsletter", "External (global)", "crm (External (global))", "Allowed", "Refused"],
    ]
    assert [row.get_attribute("class") for row in rows] == ["newly-refused", "newly-refused"]
    newsletter = Configuration.objects.get(identifier="newsletter")
    link = rows[0].find_element(By.CSS_SELECTOR, "td a").get_attribute("href")
    assert link == f"{live_server.url}/admin/catalog/configuration/{newsletter.pk}/preview/"
    assert rows[0].find_element(By.CSS_SELECTOR, "td.why").text == (
        "snippet:tone-of-voice: external_global is less trusted than ceiling external_eu"
    )
    assert browser.find_element(By.TAG_NAME, "h2").text.upper() == (
        "SENDS: 2 CHANGED (2 NEWLY REFUSED, 0 NEWLY ALLOWED)"
    )
    [run_row] = browser.find_elements(By.CSS_SELECTOR, "#what-if-runs tbody tr")
    assert run_row.get_attribute("data-run") == str(run.pk)
    assert [cell.text for cell in run_row.find_elements(By.TAG_NAME, "td")][1:7] == [
        "newsletter", "—", "External (global)", "Queued", "Allowed", "Refused",
    ]  # fmt: skip
    assert browser.find_element(By.ID, "what-if-runs-checked").text == (
        "The 1 most recent run checked (at most 50), over what each was built from and its own receiver zone."
    )
    assert stored(snippet) == (DataClass.PUBLIC_CONTENT, TrustZone.EXTERNAL_GLOBAL)
    assert GovernanceEvent.objects.count() == 0
    screenshot(browser, "what-if-stricter-class")

    click_and_wait(browser, browser.find_element(By.ID, "what-if-confirm"))

    assert browser.current_url == f"{live_server.url}/admin/snippets/snippet/{snippet.pk}/change/"
    assert stored(snippet) == (DataClass.SOURCE_CODE, TrustZone.EXTERNAL_EU)
    shown = Select(browser.find_element(By.ID, "id_data_class")).first_selected_option
    assert shown.get_attribute("value") == DataClass.SOURCE_CODE
    event = GovernanceEvent.objects.get()
    assert (event.decision, event.source_identifier) == ("reclassified", "tone-of-voice")


def test_cancelling_the_what_if_page_leaves_the_snippet_unchanged(browser, live_server):
    editor_make()
    snippet = tone_in_use()
    versions = Snippet.history.filter(id=snippet.pk).count()
    log_in(browser, live_server)
    edit_class_upward(browser, live_server, snippet)

    click_and_wait(browser, browser.find_element(By.ID, "what-if-cancel"))

    assert browser.current_url == f"{live_server.url}/admin/snippets/snippet/{snippet.pk}/change/"
    assert stored(snippet) == (DataClass.PUBLIC_CONTENT, TrustZone.EXTERNAL_GLOBAL)
    shown = Select(browser.find_element(By.ID, "id_data_class")).first_selected_option
    assert shown.get_attribute("value") == DataClass.PUBLIC_CONTENT
    assert GovernanceEvent.objects.count() == 0
    assert Snippet.history.filter(id=snippet.pk).count() == versions


def test_on_the_demo_the_what_if_counts_are_its_rows(browser, live_server):
    """The demo's tone of voice made source code for local models only: the page's figures are the
    rows it lists, sends and runs alike."""
    password = seed_demo()
    browser.get(f"{live_server.url}/admin/login/")
    browser.find_element(By.ID, "id_username").send_keys("admin")
    browser.find_element(By.ID, "id_password").send_keys(password)
    click_and_wait(browser, browser.find_element(By.CSS_SELECTOR, "input[type=submit]"))
    snippet = Snippet.objects.get(identifier="tone-of-voice")
    browser.get(f"{live_server.url}/admin/snippets/snippet/{snippet.pk}/change/")
    Select(browser.find_element(By.ID, "id_data_class")).select_by_value(DataClass.SOURCE_CODE)
    Select(browser.find_element(By.ID, "id_ceiling")).select_by_value(TrustZone.LOCAL)
    click_and_wait(browser, browser.find_element(By.NAME, "_continue"))

    heading = browser.find_element(By.ID, "what-if-sends-heading").text
    figures = re.fullmatch(
        r"Sends: (\d+) changed \((\d+) newly refused, (\d+) newly allowed(?:, (\d+) routed otherwise)?\)",
        heading,
        flags=re.IGNORECASE,
    )
    assert figures, heading
    changed, refused, allowed, routed = (int(figure or 0) for figure in figures.groups())
    rows = browser.find_elements(By.CSS_SELECTOR, "#what-if-sends tbody tr")
    assert changed == len(rows) == refused + allowed + routed >= 1
    classes = [row.get_attribute("class") for row in rows]
    assert (classes.count("newly-refused"), classes.count("newly-allowed")) == (refused, allowed)
    runs = browser.find_elements(By.CSS_SELECTOR, "#what-if-runs tbody tr")
    [run_heading] = [h.text for h in browser.find_elements(By.TAG_NAME, "h2") if "RUNS" in h.text.upper()]
    assert run_heading.upper() == f"RECENT RUNS: {len(runs)} CHANGED"
    checked = browser.find_element(By.ID, "what-if-runs-checked").text
    assert checked.startswith(f"The {AgentRun.objects.count()} most recent runs checked")
    assert Snippet.objects.get(pk=snippet.pk).data_class == DataClass.PUBLIC_CONTENT  # nothing saved yet
    screenshot(browser, "what-if-demo")
