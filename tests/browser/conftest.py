"""Headless Chromium (Debian's build, driven by Selenium through Debian's chromedriver) for admin flows.

The flags keep the browser off the network entirely: every host except the live server's resolves to
nothing (Chromium makes background DNS lookups of its own otherwise). The driver is started once
per session; each test gets a fresh cookie jar.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CHROMEDRIVER, CHROMIUM, browser_problem

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
# `make screenshots` (DOCS_SCREENSHOTS=1) also keeps these in docs/screenshots/, where the README shows them.
DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
DOCUMENTED = {
    "preview-refused",
    "admin-index-dashboard",
    "snippet-draft-publish-diff",
    "evaluation-versions-compared",
    "demo-dashboard",
    "dashboard-window-fill",
    "publish-word-diff",
    "what-if-demo",
    "governance-event-page",
    "run-page",
    "step-receipt",
    "configuration-list-fields",
    "llm-model-form",
}
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
    "--window-size=1400,1000",
)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    if browser_problem():  # the gate in tests/conftest.py has already skipped or failed the test
        pytest.skip("browser unavailable")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in CHROMIUM_ARGS:
        options.add_argument(argument)
    # An explicit driver path: Selenium then never runs its driver manager (which could download).
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(2)
    yield driver
    driver.quit()


@pytest.fixture
def browser(chromium: Any) -> Iterator[Any]:
    yield chromium
    chromium.delete_all_cookies()


def click_and_wait(driver: Any, element: Any, timeout: float = 20) -> None:
    """Click something that loads a new page, and return once that page has replaced the old one.

    Reading the next page straight after ``click()`` can find the old page's elements while the new
    one is still loading (a stale element, or an assertion about the wrong page).
    """
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    old_page = driver.find_element(By.TAG_NAME, "html")
    element.click()
    WebDriverWait(driver, timeout).until(lambda _: _detached(old_page))
    WebDriverWait(driver, timeout).until(
        lambda current: current.execute_script("return document.readyState") == "complete"
    )


def _detached(element: Any) -> bool:
    """Whether ``element`` has left the document. Chromium answers a look at a node of a page being
    replaced either as a stale element or, in the moment the old document goes, with an inspector
    error that says the node no longer belongs to the document: both mean it has left."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    except WebDriverException as error:
        if "does not belong to the document" in (error.msg or ""):
            return True
        raise
    return False


def screenshot(driver: Any, name: str) -> Path:
    """A full-page PNG under test-artifacts/ (git-ignored), kept for people to look at; with
    ``DOCS_SCREENSHOTS=1`` the documented ones also replace their copies under docs/screenshots/."""
    ARTIFACTS.mkdir(exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1400, max(1000, min(int(height) + 200, 8000)))  # + the window frame
    target = ARTIFACTS / f"{name}.png"
    driver.save_screenshot(str(target))
    driver.set_window_size(1400, 1000)
    if os.environ.get("DOCS_SCREENSHOTS") == "1" and name in DOCUMENTED:
        DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(target, DOCS_SCREENSHOTS / f"{name}.png")
    return target


def element_screenshot(element: Any, name: str) -> Path:
    """A PNG of one element under test-artifacts/ (small enough to keep in the docs)."""
    ARTIFACTS.mkdir(exist_ok=True)
    target = ARTIFACTS / f"{name}.png"
    element.screenshot(str(target))
    return target
