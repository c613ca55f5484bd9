"""A fresh demo opens on a dashboard with something to read: the admin the seed printed logs in and sees
the completed run's window fill on demo-assistant and the refusal on demo-external; evaluating
demo-assistant shows the answers' text and every case passing."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from selenium.webdriver.common.by import By

from editors.demo import LOCAL_ANSWER
from tests.browser.conftest import click_and_wait, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def seed_demo() -> str:
    """``make run``'s seed (its runs end inside it); returns the printed admin password."""
    out = StringIO()
    call_command("seed_demo", stdout=out)
    [password] = [
        line.split(":", 1)[1].strip() for line in out.getvalue().splitlines() if "admin password" in line
    ]
    return password


def test_a_fresh_demo_opens_on_a_dashboard_with_a_run_and_a_refusal_and_its_set_passes(browser, live_server):
    password = seed_demo()
    browser.get(f"{live_server.url}/admin/login/")
    browser.find_element(By.ID, "id_username").send_keys("admin")
    browser.find_element(By.ID, "id_password").send_keys(password)
    click_and_wait(browser, browser.find_element(By.CSS_SELECTOR, "input[type=submit]"))

    panel = '#editors-dashboard .panel[data-configuration="{}"]'
    assistant = browser.find_element(By.CSS_SELECTOR, panel.format("demo-assistant"))
    assert len(assistant.find_elements(By.CSS_SELECTOR, "svg.window-fill-chart")) == 1
    assert assistant.find_element(By.CSS_SELECTOR, ".refusals").text == "Refusals in the last 24 hours: 0"
    external = browser.find_element(By.CSS_SELECTOR, panel.format("demo-external"))
    assert external.find_element(By.CSS_SELECTOR, ".refusals").text == "Refusals in the last 24 hours: 1"
    assert external.find_element(By.CSS_SELECTOR, ".no-runs").text == "No completed runs yet."
    screenshot(browser, "demo-dashboard")

    browser.get(f"{live_server.url}/admin/catalog/configuration/")
    click_and_wait(browser, browser.find_element(By.LINK_TEXT, "demo-assistant"))
    browser.get(browser.current_url.replace("/change/", "/evaluate/"))
    click_and_wait(browser, browser.find_element(By.ID, "evaluate"))

    assert browser.find_element(By.ID, "evaluation-verdict").text.startswith("Passed")
    answers = [pre.text for pre in browser.find_elements(By.CSS_SELECTOR, "#evaluation-results pre.answer")]
    assert answers == [LOCAL_ANSWER] * 4
    assert browser.find_elements(By.CSS_SELECTOR, "#evaluation-results .tool-call") == []
    screenshot(browser, "demo-evaluation")
