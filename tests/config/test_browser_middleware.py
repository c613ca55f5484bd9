"""Django's signed-in user and messages for browser pages, not for the API (config/browser.py)."""

from __future__ import annotations

from django.contrib.messages import get_messages
from django.contrib.sessions.middleware import SessionMiddleware
from django.core.checks import run_checks
from django.http import HttpResponse
from django.test import RequestFactory

from config.browser import BrowserAuthenticationMiddleware, BrowserMessageMiddleware


def through_the_chain(path: str):
    def view(request):
        return HttpResponse("ok")

    request = RequestFactory().get(path)
    for middleware in (SessionMiddleware, BrowserAuthenticationMiddleware, BrowserMessageMiddleware):
        middleware(view).process_request(request)
    assert BrowserMessageMiddleware(view).process_response(request, HttpResponse("ok")).status_code == 200
    return request


def test_an_api_request_gets_no_signed_in_user_and_no_message_store():
    request = through_the_chain("/api/openai/v1/chat/completions")
    assert hasattr(request, "session")  # Django's own, on every request
    assert not hasattr(request, "user")
    assert not hasattr(request, "_messages")
    assert list(get_messages(request)) == []


def test_a_browser_page_gets_both():
    for path in ("/admin/", "/healthz", "/apis-elsewhere"):
        request = through_the_chain(path)
        assert request.user.is_anonymous
        assert list(get_messages(request)) == []
        assert hasattr(request, "_messages")


def test_the_admin_checks_accept_them_in_place_of_djangos():
    assert [message.id for message in run_checks() if message.id.startswith("admin.")] == []
