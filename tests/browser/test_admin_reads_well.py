"""The admin reads well in a real browser at 1,400 px: the product's name in the header, charts with
axes and values, the publish page's word diff, lists that fit the screen, the budget text explained."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from agents.models import AgentRun, AgentStep, RunStatus, TerminationReason
from catalog.models import Configuration
from governance.vocabulary import DataClass, TrustZone
from tests.browser.conftest import click_and_wait, element_screenshot, screenshot
from tests.browser.test_editor_admin import log_in
from tests.editor_accounts import EDITOR_PASSWORD, editor_make
from tests.factories import configuration_make, model_make, snippet_make

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG_NAME = "Escalation policy for enterprise customers with a signed service level agreement"
MINUS = "\N{MINUS SIGN}"
LONG_IDENTIFIER = "escalation-policy-for-enterprise-customers-with-a-signed-sla"


def svg_texts(chart, css: str) -> list[str]:
    return [text.text for text in chart.find_elements(By.CSS_SELECTOR, f"text.{css}")]


def fits_the_width(browser, selector: str | None = None) -> tuple[int, int]:
    """The scroll width and client width of the page (or of the element ``selector`` finds): one that
    scrolls sideways has the first larger."""
    script = "const e = arguments[0] ? document.querySelector(arguments[0]) : document.scrollingElement;"
    return tuple(browser.execute_script(script + " return [e.scrollWidth, e.clientWidth];", selector))


def extent(browser, element) -> tuple[float, float]:
    """Where ``element`` is drawn, from its left edge to its right, in pixels of the page."""
    return tuple(
        browser.execute_script(
            "const r = arguments[0].getBoundingClientRect(); return [r.left, r.right];", element
        )
    )


def owner_logs_in(browser, live_server) -> None:
    User.objects.create_superuser(username="owner", password=EDITOR_PASSWORD)
    log_in(browser, live_server, username="owner")


def run_with_steps(configuration: Configuration, *prompts: int, minutes_ago: int = 5) -> AgentRun:
    run = AgentRun.objects.create(
        configuration=configuration, input_text="Go.", input_data_class=DataClass.PUBLIC_CONTENT,
        status=RunStatus.COMPLETED, termination_reason=TerminationReason.MAX_ITERATIONS,
        prompt_tokens_total=sum(prompts), completion_tokens_total=120 * len(prompts),
    )  # fmt: skip
    AgentRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(minutes=minutes_ago))
    for index, prompt in enumerate(prompts):
        AgentStep.objects.create(
            run=run, index=index, status="completed", model=configuration.model, reported_prompt_tokens=prompt,
            usage_provenance="provider_reported", completion_tokens=120,
        )  # fmt: skip
    return run


def test_the_header_names_the_product(browser, live_server):
    editor_make()
    log_in(browser, live_server)
    assert browser.find_element(By.ID, "site-name").text == "Governed context assembly"
    assert browser.title == "Snippets, skills, configurations and runs | Governed context assembly"
    owner = User.objects.create_superuser(username="owner", password=EDITOR_PASSWORD)
    browser.delete_all_cookies()
    log_in(browser, live_server, username=owner.username)
    names = [link.text for link in browser.find_elements(By.CSS_SELECTOR, ".app-catalog.module th a")]
    assert {"API clients", "LLM models"} <= set(names)
    assert not {"Api clients", "Llm models"} & set(names)


def test_the_run_page_draws_context_used_per_step_with_axes_and_values(browser, live_server):
    configuration = configuration_make(identifier="newsletter", model=model_make(context_window=16_000))
    run = run_with_steps(configuration, 4_000, 6_500, 9_000)
    owner_logs_in(browser, live_server)

    browser.get(f"{live_server.url}/admin/agents/agentrun/{run.pk}/change/")

    chart = browser.find_element(By.CSS_SELECTOR, "svg.usage-chart")
    assert svg_texts(chart, "y-title") == ["Context used (tokens)"]
    assert svg_texts(chart, "y2-title") == ["Share of the window"]
    assert svg_texts(chart, "x-title") == ["Step"]
    assert svg_texts(chart, "y-tick") == ["0", "4,000", "8,000", "12,000", "16,000"]
    assert svg_texts(chart, "y2-tick") == ["0%", "25%", "50%", "75%", "100%"]
    assert svg_texts(chart, "x-tick") == ["0", "1", "2"]
    assert svg_texts(chart, "value-label") == ["4,000", "6,500", "9,000"]
    assert svg_texts(chart, "window-label") == ["window 16,000 tokens"]
    dots = chart.find_elements(By.CSS_SELECTOR, "circle.used-point")
    heights = [float(dot.get_attribute("cy")) for dot in dots]
    assert heights == sorted(heights, reverse=True)  # each step used more: each dot higher
    assert chart.size["width"] >= 600
    scroll, client = fits_the_width(browser)
    assert scroll <= client, (scroll, client)  # the page, with its steps, does not scroll sideways
    screenshot(browser, "run-usage-chart")
    element_screenshot(
        browser.find_element(By.CSS_SELECTOR, "figure.usage-chart-figure"), "run-usage-chart-figure"
    )


def test_the_dashboard_draws_window_fill_with_axes_and_values(browser, live_server):
    configuration = configuration_make(identifier="newsletter", model=model_make(context_window=16_000))
    for minutes, prompt in ((50, 4_000), (30, 8_000), (10, 12_000)):
        run_with_steps(configuration, prompt, minutes_ago=minutes)
    editor_make()
    log_in(browser, live_server)

    chart = browser.find_element(
        By.CSS_SELECTOR, '#editors-dashboard .panel[data-configuration="newsletter"] svg.window-fill-chart'
    )
    assert svg_texts(chart, "y-title") == ["Window fill (%)"]
    assert svg_texts(chart, "x-title") == ["Run started (UTC)"]
    assert svg_texts(chart, "y-tick") == ["0%", "25%", "50%", "75%", "100%"]
    assert svg_texts(chart, "value-label") == ["25%", "50%", "75%"]
    assert len(svg_texts(chart, "x-tick")) == 3
    assert svg_texts(chart, "window-label") == ["window"]
    title = chart.find_element(By.CSS_SELECTOR, "text.y-title")
    ticks = chart.find_elements(By.CSS_SELECTOR, "text.y-tick")
    assert extent(browser, title)[1] + 2 <= min(extent(browser, tick)[0] for tick in ticks)
    assert extent(browser, title)[0] >= extent(browser, chart)[0]  # and inside the drawing
    screenshot(browser, "dashboard-window-fill")
    panel = browser.find_element(
        By.CSS_SELECTOR, '#editors-dashboard .panel[data-configuration="newsletter"]'
    )
    element_screenshot(panel, "dashboard-window-fill-panel")


def test_the_publish_page_marks_the_changed_words_side_by_side(browser, live_server):
    text = (
        "Answer in the customer's language. Keep every reply under two hundred words, "
        "name the next step plainly, and never promise a delivery date."
    )
    snippet = snippet_make(identifier="support-replies", name="Support replies", text=text, tags=("tone",))
    editor_make()
    log_in(browser, live_server)
    browser.get(f"{live_server.url}/admin/snippets/snippet/{snippet.pk}/change/")
    field = browser.find_element(By.ID, "id_text")
    field.clear()
    field.send_keys(text.replace("two hundred", "one hundred and fifty").replace("plainly", "first"))
    click_and_wait(browser, browser.find_element(By.NAME, "_continue"))
    click_and_wait(browser, browser.find_element(By.LINK_TEXT, "Review and publish"))

    row = browser.find_element(By.CSS_SELECTOR, '#draft-changes tr[data-field="text"]')
    live, draft = row.find_element(By.CSS_SELECTOR, "td.live"), row.find_element(By.CSS_SELECTOR, "td.draft")
    assert [d.text for d in live.find_elements(By.CSS_SELECTOR, "del.diff-del")] == ["two", "plainly"]
    assert [i.text for i in draft.find_elements(By.CSS_SELECTOR, "ins.diff-add")] == [
        "one", "and fifty", "first",
    ]  # fmt: skip
    assert live.text == text
    marked = draft.find_element(By.CSS_SELECTOR, "ins.diff-add")
    assert marked.value_of_css_property("background-color") == "rgba(204, 255, 216, 1)"
    assert abs(live.size["width"] - draft.size["width"]) <= 2 and live.size["width"] >= 400
    assert fits_the_width(browser)[0] <= fits_the_width(browser)[1]
    screenshot(browser, "publish-word-diff")
    element_screenshot(browser.find_element(By.ID, "draft-changes"), "publish-word-diff-table")


def test_the_snippet_and_run_lists_fit_1400_pixels(browser, live_server):
    configuration = configuration_make(
        identifier="customer-support-enterprise", name=LONG_NAME, snippet_tags=["support"],
    )  # fmt: skip
    for n in range(3):
        snippet_make(
            identifier=f"{LONG_IDENTIFIER}-{n}", name=f"{LONG_NAME} ({n})",
            text="Answer plainly. " * 400, tags=("support", "enterprise", "escalation", "legal-review"),
            data_class=DataClass.INTERNAL_CONFIGURATION, ceiling=TrustZone.EXTERNAL_EU,
        )  # fmt: skip
        run_with_steps(configuration, 12_345, 23_456)
    owner_logs_in(browser, live_server)
    assert browser.execute_script("return window.innerWidth") == 1400

    for page, name in (("snippets/snippet", "snippet-list"), ("agents/agentrun", "run-list")):
        browser.get(f"{live_server.url}/admin/{page}/")
        assert len(browser.find_elements(By.CSS_SELECTOR, "#result_list tbody tr")) == 3
        scroll, client = fits_the_width(browser)
        assert scroll <= client, (page, scroll, client)
        # The admin's list scrolls inside its own box when it is too wide: that must not happen either.
        scroll, client = fits_the_width(browser, "#changelist .results")
        assert scroll <= client, (page, "results", scroll, client)
        screenshot(browser, name)


def test_the_snippet_pages_budget_text_says_what_its_figures_are(browser, live_server):
    from editors.edit_effects import snippet_edit_effects
    from snippets.selectors import SnippetEdit

    configuration_make(
        identifier="newsletter", snippet_tags=["tone"], model=model_make(context_window=32_768)
    )
    snippet = snippet_make(identifier="tone-of-voice", name="Tone of voice", text="Warm.", tags=("tone",))
    [effect] = snippet_edit_effects(edit=SnippetEdit(snippet=snippet, tags=("tone",)), saved_tags=["tone"])
    saved = effect.before
    editor_make()
    log_in(browser, live_server)
    browser.get(f"{live_server.url}/admin/snippets/snippet/{snippet.pk}/change/")
    WebDriverWait(browser, 20).until(
        lambda b: b.find_elements(By.CSS_SELECTOR, "#live-badge-effects tr[data-configuration]")
    )

    table = browser.find_element(By.ID, "live-badge-effects")
    caption = table.find_element(By.TAG_NAME, "caption").text
    assert "the share of its prompt budget its context takes" in caption
    assert (
        "the prompt budget is the model's context window less the output reserve and the safety margin"
        in caption
    )
    assert [th.text for th in table.find_elements(By.TAG_NAME, "th")] == [
        "Configuration", "Model", "Share of the prompt budget, saved", "With this edit",
    ]  # fmt: skip
    cell = table.find_elements(By.CSS_SELECTOR, 'tr[data-configuration="newsletter"] td')[2]
    assert (
        cell.text
        == f"{saved.share:.2f}% ({saved.estimated:,} of {saved.budget:,} tokens; snippets {saved.snippets:,})"
    )
    assert cell.get_attribute("title") == (
        f"Prompt budget {saved.budget:,} = context window 32,768 {MINUS} output reserve {saved.reserve:,} "
        f"{MINUS} safety margin {saved.safety:,} tokens"
    )
    assert saved.budget == 32_768 - saved.reserve - saved.safety
    screenshot(browser, "snippet-budget-text")
