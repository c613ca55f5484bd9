"""The governed call views are DRF views as DRF means them to be used: its ``as_view`` and
``dispatch`` serve them, and each ``post`` hands its call to the one bridge to the event loop."""

from __future__ import annotations

import pytest
from rest_framework.views import APIView

from gateway.apis.completions import CompletionApi
from gateway.apis.openai_compat import ChatCompletionsApi
from gateway.apis.openai_responses import ResponsesApi
from gateway.apis.run_events import RunEventsApi
from gateway.apis.serving import GovernedCallApi
from gateway.apis.sse import EventStreamApi


@pytest.mark.parametrize("view", [CompletionApi, ChatCompletionsApi, ResponsesApi])
def test_a_governed_call_view_is_served_by_drfs_own_lifecycle(view):
    assert issubclass(view, GovernedCallApi)
    assert view.as_view.__func__ is APIView.as_view.__func__
    assert view.dispatch is APIView.dispatch
    assert view.finalize_response is APIView.finalize_response
    assert view.handle_exception is APIView.handle_exception


@pytest.mark.parametrize("view", [CompletionApi, ChatCompletionsApi, ResponsesApi, RunEventsApi])
def test_every_streaming_view_learns_its_server_in_one_place(view):
    assert issubclass(view, EventStreamApi)
    assert view.initialize_request is EventStreamApi.initialize_request
