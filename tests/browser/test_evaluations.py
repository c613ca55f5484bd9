"""An editor evaluates a draft before publishing it: two cases, a drafted snippet, the evaluation's two
columns with their expectations, then the publish the configuration allows only after it passed."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from evaluations.models import Evaluation, EvaluationResult
from governance.drafts import draft_get
from governance.vocabulary import DataClass
from snippets.models import Snippet
from tests.browser.conftest import click_and_wait, screenshot
from tests.browser.test_editor_admin import log_in
from tests.editor_accounts import editor_make
from tests.factories import configuration_make, snippet_make

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LIVE_TEXT = "Answer in a calm, formal tone."
DRAFT_TEXT = "Answer in a warm, brief tone and greet the customer by their first name."


def add_case(browser, live_server, configuration, name: str, text: str, **expect: str) -> None:
    browser.get(f"{live_server.url}/admin/evaluations/evaluationcase/add/")
    Select(browser.find_element(By.ID, "id_configuration")).select_by_value(str(configuration.pk))
    browser.find_element(By.ID, "id_name").send_keys(name)
    browser.find_element(By.ID, "id_input").send_keys(text)
    Select(browser.find_element(By.ID, "id_data_class")).select_by_value(DataClass.PUBLIC_CONTENT)
    for field, value in expect.items():
        browser.find_element(By.ID, f"id_{field}").send_keys(value)
    browser.find_element(By.ID, "id_must_be_permitted").click()
    click_and_wait(browser, browser.find_element(By.NAME, "_save"))


def checks_of(cell) -> list[tuple[str, str]]:
    return [
        (item.text, item.get_attribute("data-held"))
        for item in cell.find_elements(By.CSS_SELECTOR, ".checks li")
    ]


def test_an_editor_evaluates_a_draft_side_by_side_and_then_publishes_it(browser, live_server):
    editor_make()
    configuration = configuration_make(
        identifier="support", system_prompt="You answer customers.", snippet_tags=["tone"],
        require_passing_evaluation=True,
    )  # fmt: skip
    snippet = snippet_make(identifier="tone", name="Tone", text=LIVE_TEXT, tags=("tone",))
    log_in(browser, live_server)

    add_case(browser, live_server, configuration, "parcel", "Where is my parcel?", must_contain="parcel")
    add_case(browser, live_server, configuration, "refund", "Can I get a refund?", must_not_contain="pirate",
             max_tokens="200")  # fmt: skip
    assert configuration.evaluation_cases.count() == 2

    browser.get(f"{live_server.url}/admin/snippets/snippet/{snippet.pk}/change/")
    text = browser.find_element(By.ID, "id_text")
    text.clear()
    text.send_keys(DRAFT_TEXT)
    click_and_wait(browser, browser.find_element(By.NAME, "_continue"))
    assert draft_get(snippet).values["text"] == DRAFT_TEXT
    assert Snippet.objects.get(pk=snippet.pk).text == LIVE_TEXT

    browser.get(f"{live_server.url}/admin/snippets/snippet/{snippet.pk}/publish/")
    [check] = browser.find_elements(By.CSS_SELECTOR, "#publish-checks li")
    assert check.get_attribute("class") == "blocking"
    assert check.text == (
        "support: no evaluation of this draft yet. This configuration requires a passing evaluation "
        "before publishing. Evaluate"
    )
    screenshot(browser, "evaluation-publish-blocked")
    click_and_wait(browser, check.find_element(By.LINK_TEXT, "Evaluate"))
    cases = [item.text for item in browser.find_elements(By.CSS_SELECTOR, "#evaluation-cases li")]
    assert cases == ["parcel (Public content)", "refund (Public content)"]
    click_and_wait(browser, browser.find_element(By.ID, "evaluate"))

    evaluation = Evaluation.objects.get()
    assert browser.find_element(By.ID, "evaluation-progress").text == "4 of 4 sends"
    assert browser.find_element(By.ID, "evaluation-verdict").text.startswith("Passed")
    assert browser.find_element(By.ID, "evaluation-drafts").text == "snippet tone"
    headings = browser.find_elements(By.CSS_SELECTOR, "#evaluation-results > thead > tr > th")
    assert [th.text.upper() for th in headings] == ["CASE", "LIVE", "LIVE + DRAFTS"]
    rows = browser.find_elements(By.CSS_SELECTOR, "#evaluation-results > tbody > tr")
    assert [row.get_attribute("data-case") for row in rows] == ["parcel", "refund"]
    for row, case_checks in zip(
        rows,
        (
            [("must be permitted", "true"), ("must contain “parcel”", "true")],
            [("must be permitted", "true"), ("must not contain “pirate”", "true")],
        ),
        strict=True,
    ):
        for side in ("live", "drafted"):
            cell = row.find_element(By.CSS_SELECTOR, f"td.side-{side}")
            result = EvaluationResult.objects.get(evaluation=evaluation, case_name=row.get_attribute("data-case"),
                                                  side=side)  # fmt: skip
            assert cell.find_element(By.CSS_SELECTOR, ".outcome").text == "Answered"
            assert cell.find_element(By.CSS_SELECTOR, "pre.answer").text == result.answer
            assert checks_of(cell)[: len(case_checks)] == case_checks
            assert cell.find_element(By.CSS_SELECTOR, ".window-fill").text == (
                f"Window fill {result.window_fill:.2f}% of {result.breakdown['window']:,} tokens"
            )
            assert cell.find_element(By.CSS_SELECTOR, ".governance").text.startswith("Governance: permitted")
            assert cell.find_element(By.CSS_SELECTOR, ".receipt summary").text == (
                f"Receipt {result.receipt['decision_id']}"
            )
    live = EvaluationResult.objects.get(evaluation=evaluation, case_name="parcel", side="live")
    drafted = EvaluationResult.objects.get(evaluation=evaluation, case_name="parcel", side="drafted")
    assert drafted.breakdown["snippets"] > live.breakdown["snippets"]
    screenshot(browser, "evaluation-side-by-side")

    browser.get(f"{live_server.url}/admin/snippets/snippet/{snippet.pk}/publish/")
    [check] = browser.find_elements(By.CSS_SELECTOR, "#publish-checks li")
    assert (check.get_attribute("class"), check.text) == (
        "note",
        f"support: evaluation {evaluation.pk} of support of this draft passed. Open",
    )
    click_and_wait(browser, browser.find_element(By.ID, "publish"))
    assert Snippet.objects.get(pk=snippet.pk).text == DRAFT_TEXT
    assert "Published tone." in browser.find_element(By.CSS_SELECTOR, "ul.messagelist").text
    screenshot(browser, "evaluation-published")
