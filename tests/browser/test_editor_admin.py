"""An editor's day in a real browser: write a snippet, see what it costs, preview what a model receives."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from catalog.models import Configuration
from context_assembly.badges import token_badge
from governance.vocabulary import DataClass, TrustZone
from snippets.models import Snippet
from tests.browser.conftest import click_and_wait, screenshot
from tests.editor_accounts import EDITOR_PASSWORD, editor_make
from tests.factories import configuration_make, snippet_make

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TEXT = "Write warmly, briefly and concretely."


def log_in(browser, live_server, username: str = "editor") -> None:
    browser.get(f"{live_server.url}/admin/login/")
    browser.find_element(By.ID, "id_username").send_keys(username)
    browser.find_element(By.ID, "id_password").send_keys(EDITOR_PASSWORD)
    click_and_wait(browser, browser.find_element(By.CSS_SELECTOR, "input[type=submit]"))
    assert browser.find_element(By.ID, "user-tools").text.upper().startswith("WELCOME")


def external_configuration() -> Configuration:
    return configuration_make(
        identifier="newsletter", zone=TrustZone.EXTERNAL_GLOBAL, system_prompt="You write our newsletter.",
        snippet_tags=["tone"],
    )  # fmt: skip


def source_row(browser, source: str):
    return browser.find_element(By.CSS_SELECTOR, f'#sources tr[data-source="{source}"]')


def test_editor_writes_a_tagged_snippet_and_sees_it_in_the_preview(browser, live_server):
    editor_make()
    configuration = external_configuration()
    log_in(browser, live_server)

    browser.get(f"{live_server.url}/admin/snippets/snippet/add/")
    browser.find_element(By.ID, "id_identifier").send_keys("tone-of-voice")
    browser.find_element(By.ID, "id_name").send_keys("Tone of voice")
    browser.find_element(By.ID, "id_text").send_keys(TEXT)
    browser.find_element(By.ID, "id_tag_names").send_keys("Tone")
    Select(browser.find_element(By.ID, "id_data_class")).select_by_value(DataClass.PUBLIC_CONTENT)
    Select(browser.find_element(By.ID, "id_ceiling")).select_by_value(TrustZone.EXTERNAL_GLOBAL)
    click_and_wait(browser, browser.find_element(By.NAME, "_continue"))

    badge = token_badge(TEXT).label
    assert badge in browser.find_element(By.CSS_SELECTOR, ".field-tokens .readonly").text
    snippet = Snippet.objects.get(identifier="tone-of-voice")
    assert list(snippet.tags.values_list("name", flat=True)) == ["tone"]
    browser.get(f"{live_server.url}/admin/snippets/snippet/")
    listed = browser.find_element(By.CSS_SELECTOR, "td.field-token_share span")
    assert listed.get_attribute("title") == badge  # the figure and its share in the cell, all of it here
    assert listed.text.split("\n")[0] == f"{token_badge(TEXT).tokens:,}"

    browser.get(f"{live_server.url}/admin/catalog/configuration/{configuration.pk}/change/")
    click_and_wait(browser, browser.find_element(By.CSS_SELECTOR, '.object-tools a[href$="/preview/"]'))
    system = browser.find_element(By.CSS_SELECTOR, '#messages .message[data-role="system"] pre').text
    assert system == f"You write our newsletter.\n\nTone of voice:\n{TEXT}"
    row = source_row(browser, "snippet:tone-of-voice")
    assert row.find_element(By.CSS_SELECTOR, ".outcome").text == "Allowed"
    snippets_segment = browser.find_element(By.CSS_SELECTOR, '#budget-bar .seg[data-segment="snippets"]')
    assert snippets_segment.size["width"] >= 1
    assert snippets_segment.get_attribute("title").startswith("Snippets: ")
    assert browser.find_element(By.ID, "verdict").text == "Would send"
    screenshot(browser, "preview-allowed")


def test_a_snippet_classified_above_the_external_ceiling_shows_as_refused(browser, live_server):
    editor_make()
    configuration = external_configuration()
    snippet_make(identifier="tone-of-voice", name="Tone of voice", text=TEXT, tags=("tone",))
    snippet_make(
        identifier="release-runbook", name="Release runbook", text="Deploy with make release.", tags=("tone",),
        data_class=DataClass.SOURCE_CODE, ceiling=TrustZone.EXTERNAL_EU,
    )  # fmt: skip
    log_in(browser, live_server)

    browser.get(f"{live_server.url}/admin/catalog/configuration/{configuration.pk}/preview/")
    browser.find_element(By.ID, "id_task_input").clear()
    browser.find_element(By.ID, "id_task_input").send_keys("Draft this week's issue.")
    browser.find_element(By.ID, "id_context-0-name").send_keys("brief")
    Select(browser.find_element(By.ID, "id_context-0-data_class")).select_by_value(DataClass.EDITOR_CONTENT)
    browser.find_element(By.ID, "id_context-0-text").send_keys("Launch week.")
    click_and_wait(browser, browser.find_element(By.ID, "preview-submit"))

    refused = source_row(browser, "snippet:release-runbook")
    assert refused.find_element(By.CSS_SELECTOR, ".outcome").text == "Refused"
    assert "outcome-refused" in refused.find_element(By.CSS_SELECTOR, ".outcome").get_attribute("class")
    assert (
        source_row(browser, "snippet:tone-of-voice").find_element(By.CSS_SELECTOR, ".outcome").text
        == "Allowed"
    )
    assert (
        source_row(browser, "caller_context:context[0]").find_element(By.CSS_SELECTOR, ".outcome").text
        == "Allowed"
    )
    assert browser.find_element(By.ID, "verdict").text == "Would not send"

    assert browser.find_element(By.ID, "nothing-sent").text.startswith(
        "Nothing would be sent to the model: governance refuses 1 source for this zone."
    )
    headings = [h.text.upper() for h in browser.find_elements(By.TAG_NAME, "h2")]
    assert [h for h in headings if h.startswith("MESSAGES")] == [
        "MESSAGES AS ASSEMBLED: NOTHING WOULD BE SENT"
    ]
    system = browser.find_element(By.CSS_SELECTOR, '#messages .message[data-role="system"]')
    [marked] = system.find_elements(By.CSS_SELECTOR, ".part-refused")
    assert marked.get_attribute("data-source") == "snippet:release-runbook"
    label = marked.find_element(By.CSS_SELECTOR, ".refused-label").text
    assert label.startswith(
        "Refused, not sent: Snippet release-runbook, class Source code, ceiling External (EU): "
    )
    struck = marked.find_element(By.CSS_SELECTOR, ".refused-text")
    assert (struck.tag_name, struck.text) == ("del", "Release runbook:\nDeploy with make release.")
    assert "line-through" in struck.value_of_css_property("text-decoration")
    assert "Tone of voice:" in system.text and "Tone of voice:" not in marked.text
    screenshot(browser, "preview-refused")


def test_an_editor_cannot_open_the_provider_admin(browser, live_server):
    editor_make()
    log_in(browser, live_server)
    browser.get(f"{live_server.url}/admin/catalog/provider/")
    assert browser.find_element(By.TAG_NAME, "h1").text == "403 Forbidden"


def test_the_admin_index_draws_each_configurations_window_fill(browser, live_server):
    from datetime import timedelta

    from django.utils import timezone

    from agents.models import AgentRun, AgentStep

    editor_make()
    configuration = external_configuration()
    for minutes, reported, estimated in ((50, 12_000, None), (30, None, 30_000), (10, 64_000, None)):
        run = AgentRun.objects.create(
            configuration=configuration, input_text="Go.", input_data_class=DataClass.PUBLIC_CONTENT
        )
        AgentRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(minutes=minutes))
        AgentStep.objects.create(
            run=run, index=0, status="completed", model=configuration.model, reported_prompt_tokens=reported,
            estimated_prompt_tokens=estimated, usage_provenance="provider_reported" if reported else "estimated",
        )  # fmt: skip
    log_in(browser, live_server)

    panel = browser.find_element(
        By.CSS_SELECTOR, '#editors-dashboard .panel[data-configuration="newsletter"]'
    )
    chart = panel.find_element(By.CSS_SELECTOR, "svg.window-fill-chart")
    assert chart.size["width"] > 100 and chart.size["height"] > 50
    dots = chart.find_elements(By.CSS_SELECTOR, "circle.fill-point")
    assert [dot.get_attribute("class") for dot in dots] == [
        "fill-point provider_reported",
        "fill-point estimated",
        "fill-point provider_reported",
    ]
    assert float(dots[0].get_attribute("cy")) > float(dots[2].get_attribute("cy"))  # 12,000 below 64,000
    assert panel.find_element(By.CSS_SELECTOR, ".refusals").text == "Refusals in the last 24 hours: 0"
    assert browser.find_element(By.ID, "dashboard-review").text == "0 skills awaiting review"
    screenshot(browser, "admin-index-dashboard")


def test_the_token_badge_follows_typing_and_the_table_shows_before_and_after(browser, live_server):
    from selenium.webdriver.support.ui import WebDriverWait

    editor_make()
    external_configuration()
    snippet = snippet_make(
        identifier="tone-of-voice", name="Tone of voice", text="Warm.", tags=("tone",),
        data_class=DataClass.PUBLIC_CONTENT, ceiling=TrustZone.EXTERNAL_GLOBAL,
    )  # fmt: skip
    log_in(browser, live_server)
    browser.get(f"{live_server.url}/admin/snippets/snippet/{snippet.pk}/change/")
    badge = browser.find_element(By.CSS_SELECTOR, ".field-tokens .readonly")
    assert badge.text == token_badge("Warm.").label
    WebDriverWait(browser, 20).until(
        lambda b: b.find_elements(By.CSS_SELECTOR, "#live-badge-effects tr[data-configuration]")
    )
    [row] = browser.find_elements(By.CSS_SELECTOR, "#live-badge-effects tr[data-configuration]")
    before, after = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")][2:]
    assert before == after  # nothing typed yet

    browser.find_element(By.ID, "id_text").send_keys(" " + TEXT)

    typed = f"Warm. {TEXT}"
    WebDriverWait(browser, 20).until(lambda b: badge.text == token_badge(typed).label)
    assert badge.get_attribute("data-live") == "true"
    row = browser.find_element(By.CSS_SELECTOR, '#live-badge-effects tr[data-configuration="newsletter"]')
    WebDriverWait(browser, 20).until(lambda b: row.find_elements(By.TAG_NAME, "td")[3].text != before)
    cells = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
    assert cells[:3] == ["newsletter", external_configuration_model(), before]
    snippets_before = int(before.rsplit("snippets ", 1)[1].rstrip(")").replace(",", ""))
    snippets_after = int(cells[3].rsplit("snippets ", 1)[1].rstrip(")").replace(",", ""))
    assert snippets_after - snippets_before == token_badge(typed).tokens - token_badge("Warm.").tokens
    assert Snippet.objects.get(pk=snippet.pk).text == "Warm."  # typing saves nothing
    screenshot(browser, "snippet-live-badge")


def external_configuration_model() -> str:
    return Configuration.objects.get(identifier="newsletter").model.model_id


def test_a_system_prompts_badge_follows_typing_for_the_configurations_model(browser, live_server):
    from django.contrib.auth.models import User
    from selenium.webdriver.support.ui import WebDriverWait

    from agents.runtime.plan import model_profile

    User.objects.create_superuser(username="owner", password=EDITOR_PASSWORD)
    configuration = external_configuration()
    log_in(browser, live_server, username="owner")
    browser.get(f"{live_server.url}/admin/catalog/configuration/{configuration.pk}/change/")
    badge = browser.find_element(By.CSS_SELECTOR, ".field-tokens .readonly")
    profile = model_profile(configuration.model)
    assert badge.text == token_badge("You write our newsletter.", profile).label

    browser.find_element(By.ID, "id_system_prompt").send_keys(" Keep it under 300 words.")

    typed = "You write our newsletter. Keep it under 300 words."
    WebDriverWait(browser, 20).until(lambda b: badge.text == token_badge(typed, profile).label)
    assert not browser.find_elements(By.CSS_SELECTOR, "#live-badge-effects tr[data-configuration]")
    assert Configuration.objects.get(pk=configuration.pk).system_prompt == "You write our newsletter."


def test_an_edit_is_a_draft_until_published(browser, live_server, fake_provider):
    from django.test import Client

    from catalog.services import api_client_create
    from tests.fakes.provider_server import Reply

    editor_make()
    configuration = configuration_make(
        identifier="newsletter", system_prompt="You write our newsletter.", snippet_tags=["tone"],
        model=fake_model(fake_provider),
    )  # fmt: skip
    snippet = snippet_make(identifier="tone-of-voice", name="Tone of voice", text="Warm.", tags=("tone",))
    issued = api_client_create(
        name="consumer", scopes=["configurations:use", "snippets:read"], configurations=[configuration],
        default_input_data_class=DataClass.PUBLIC_CONTENT, trust_zone=TrustZone.EXTERNAL_GLOBAL,
    )  # fmt: skip
    api = Client(headers={"Authorization": f"Bearer {issued.token}"})

    def api_text() -> tuple[str, bool]:
        body = api.get("/api/v1/snippets/tone-of-voice").json()
        return body["text"], body["has_draft"]

    def sent_system_prompt() -> str:
        fake_provider.script(Reply(text="Fine."))
        chat = {"model": "newsletter", "messages": [{"role": "user", "content": "Hello"}]}
        assert (
            api.post("/api/openai/v1/chat/completions", chat, content_type="application/json").status_code
            == 200
        )
        return fake_provider.bodies()[-1]["messages"][0]["content"]

    log_in(browser, live_server)
    browser.get(f"{live_server.url}/admin/snippets/snippet/{snippet.pk}/change/")
    text = browser.find_element(By.ID, "id_text")
    text.clear()
    text.send_keys(TEXT)
    click_and_wait(browser, browser.find_element(By.NAME, "_continue"))

    messages = browser.find_element(By.CSS_SELECTOR, "ul.messagelist").text
    assert "Saved as a draft: the live snippet is unchanged until the draft is published." in messages
    assert "This form shows a draft by user:editor" in messages
    assert browser.find_element(By.ID, "id_text").get_attribute("value") == TEXT
    assert api_text() == ("Warm.", True)
    assert sent_system_prompt() == "You write our newsletter.\n\nTone of voice:\nWarm."
    screenshot(browser, "snippet-draft-saved")

    click_and_wait(browser, browser.find_element(By.LINK_TEXT, "Review and publish"))
    row = browser.find_element(By.CSS_SELECTOR, '#draft-changes tr[data-field="text"]')
    assert row.find_element(By.CSS_SELECTOR, "td.live").text == "Warm."
    assert row.find_element(By.CSS_SELECTOR, "td.draft").text == TEXT
    screenshot(browser, "snippet-draft-publish-diff")
    click_and_wait(browser, browser.find_element(By.ID, "publish"))

    assert "Published tone-of-voice." in browser.find_element(By.CSS_SELECTOR, "ul.messagelist").text
    assert api_text() == (TEXT, False)
    assert sent_system_prompt() == f"You write our newsletter.\n\nTone of voice:\n{TEXT}"
    screenshot(browser, "snippet-published")


def fake_model(fake_provider):
    from catalog.models import ProviderKind
    from tests.factories import model_make, provider_make

    provider = provider_make(
        kind=ProviderKind.OPENAI_COMPATIBLE, base_url=fake_provider.openai_base_url,
        trust_zone=TrustZone.EXTERNAL_GLOBAL, timeout_seconds=5, max_retries=0,
    )  # fmt: skip
    return model_make(provider=provider, model_id="gpt-4o")


def test_the_preview_compares_live_with_my_drafts(browser, live_server):
    from agents.runtime.plan import model_profile
    from context_assembly.estimator import Estimator
    from snippets.composition import snippet_block

    editor_make()
    configuration = external_configuration()
    snippet = snippet_make(identifier="tone-of-voice", name="Tone of voice", text="Warm.", tags=("tone",))
    log_in(browser, live_server)
    browser.get(f"{live_server.url}/admin/snippets/snippet/{snippet.pk}/change/")
    text = browser.find_element(By.ID, "id_text")
    text.clear()
    text.send_keys(TEXT)
    click_and_wait(browser, browser.find_element(By.NAME, "_continue"))
    assert Snippet.objects.get(pk=snippet.pk).text == "Warm."

    browser.get(f"{live_server.url}/admin/catalog/configuration/{configuration.pk}/preview/")
    assert not browser.find_elements(By.ID, "draft-comparison")
    browser.find_element(By.ID, "id_compare").click()
    click_and_wait(browser, browser.find_element(By.ID, "preview-submit"))

    estimator = Estimator(model_profile(configuration.model))
    drafted = Snippet(name="Tone of voice", text=TEXT)
    before, after = (
        estimator.count_text(snippet_block([snippet])),
        estimator.count_text(snippet_block([drafted])),
    )
    row = browser.find_element(By.CSS_SELECTOR, '#draft-comparison tr[data-part="snippet:tone-of-voice"]')
    cells = [row.find_element(By.CSS_SELECTOR, f"td.{side}").text for side in ("live", "drafted", "delta")]
    assert cells == [str(before), str(after), f"+{after - before}"]
    assert "snippet tone-of-voice" in browser.find_element(By.ID, "drafts-applied").text
    assert browser.find_element(By.ID, "id_compare").is_selected()
    assert browser.find_element(By.ID, "drafted-budget-bar").is_displayed()
    screenshot(browser, "preview-compare-drafts")
