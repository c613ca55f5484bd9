"""An editor compares two published versions of a configuration over its evaluation set: chooses them
on the evaluate page, and reads pass rate, tokens, cost and latency per case and in total, with the
longer candidate prompt's extra tokens marked worse."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from catalog.services import configuration_save
from evaluations.models import Evaluation
from governance.actors import Actor
from governance.vocabulary import DataClass
from tests.browser.conftest import click_and_wait, screenshot
from tests.browser.test_editor_admin import log_in
from tests.editor_accounts import editor_make
from tests.evaluations.test_evaluations import case_make
from tests.factories import configuration_make

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_editor_compares_two_published_versions_side_by_side(browser, live_server):
    editor_make()
    configuration = configuration_make(identifier="support", system_prompt="You answer customers.")
    first = configuration.history.order_by("-history_id").first().history_id
    configuration.system_prompt = "You answer customers of the shop, always naming the order and its date."
    configuration_save(configuration=configuration, actor=Actor.system("test"))
    second = configuration.history.order_by("-history_id").first().history_id
    case_make(configuration, "parcel", must_contain="parcel", data_class=DataClass.PUBLIC_CONTENT)
    case_make(configuration, "refund", input="Can I get a refund?", must_contain="refund")
    log_in(browser, live_server)

    browser.get(f"{live_server.url}/admin/catalog/configuration/{configuration.pk}/evaluate/")
    Select(browser.find_element(By.ID, "id_baseline")).select_by_value(str(first))
    Select(browser.find_element(By.ID, "id_candidate")).select_by_value(str(second))
    click_and_wait(browser, browser.find_element(By.ID, "evaluate"))

    evaluation = Evaluation.objects.get()
    assert (evaluation.pins[0]["history_id"], evaluation.candidate_pins[0]["history_id"]) == (first, second)
    assert browser.find_element(By.ID, "evaluation-progress").text == "4 of 4 sends"
    assert browser.find_element(By.ID, "evaluation-regressions").text == "none"
    headings = browser.find_elements(By.CSS_SELECTOR, "#evaluation-results > thead > tr > th")
    assert [th.text.upper() for th in headings] == ["CASE", "BASELINE VERSION", "CANDIDATE VERSION"]
    totals = {
        row.get_attribute("data-figure"): row.find_elements(By.TAG_NAME, "td")
        for row in browser.find_elements(By.CSS_SELECTOR, "#comparison-totals tbody tr")
    }
    assert list(totals) == ["Pass rate", "Judge score (mean)", "Tokens", "Cost", "Latency"]
    assert [cell.text for cell in totals["Pass rate"]] == ["100%", "100%", "±0%"]
    assert totals["Tokens"][2].get_attribute("data-verdict") == "worse"
    assert "worse" in totals["Tokens"][2].get_attribute("class")
    assert totals["Judge score (mean)"][2].text == "—"
    cases = browser.find_elements(By.CSS_SELECTOR, "#comparison-cases tbody tr")
    assert [row.get_attribute("data-case") for row in cases] == ["parcel", "refund"]
    for row in cases:
        tokens = row.find_element(By.CSS_SELECTOR, 'td[data-figure="Tokens"]')
        assert (tokens.get_attribute("data-verdict"), tokens.text.startswith("+")) == ("worse", True)
    screenshot(browser, "evaluation-versions-compared")
