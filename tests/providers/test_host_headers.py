"""A provider is told the call and its credentials, nothing about the host: the SDKs' X-Stainless-*
headers (the host's OS, architecture, Python and SDK versions, the attempt's retry count and
timeouts) are not sent, by either SDK, in any of the four ways a call is sent (providers/base.py,
``HOST_HEADERS``)."""

from __future__ import annotations

import pytest

from providers.anthropic import AnthropicAdapter
from providers.openai_compatible import OpenAICompatibleAdapter
from tests.providers import test_anthropic, test_openai_compatible
from tests.providers.sending import sent_four_ways

ADAPTERS = {
    "openai": (OpenAICompatibleAdapter, test_openai_compatible),
    "anthropic": (AnthropicAdapter, test_anthropic),
}


@pytest.mark.parametrize("sdk", ADAPTERS)
def test_the_provider_is_told_nothing_about_the_host_whole_or_streamed_blocking_or_on_a_loop(
    sdk, fake_provider
):
    adapter_class, helpers = ADAPTERS[sdk]
    sent_four_ways(adapter_class(helpers.config(fake_provider)), helpers.call(), helpers.call(stream=True))
    sent = [{name.lower() for name in request.headers} for request in fake_provider.requests]
    assert len(sent) == 4
    assert [sorted(name for name in names if name.startswith("x-stainless")) for names in sent] == [[]] * 4
    assert all({"content-type", "user-agent"} <= names for names in sent)
    assert all("authorization" in names or "x-api-key" in names for names in sent)
