"""A provider is told the call and its credentials, nothing about the host: the SDKs' X-Stainless-*
headers (the host's OS, architecture, Python and SDK versions, the attempt's retry count and
timeouts) are not sent, by either SDK, in any of the four ways a call is sent (providers/base.py,
``HOST_HEADERS``)."""

from __future__ import annotations

import asyncio

import pytest

from providers.anthropic import AnthropicAdapter
from providers.openai_compatible import OpenAICompatibleAdapter
from tests.providers import test_anthropic, test_openai_compatible

ADAPTERS = {
    "openai": (OpenAICompatibleAdapter, test_openai_compatible),
    "anthropic": (AnthropicAdapter, test_anthropic),
}


@pytest.mark.parametrize("sdk", ADAPTERS)
def test_the_provider_is_told_nothing_about_the_host_whole_or_streamed_blocking_or_on_a_loop(
    sdk, fake_provider
):
    adapter_class, helpers = ADAPTERS[sdk]
    adapter = adapter_class(helpers.config(fake_provider))
    whole, streamed = helpers.call(), helpers.call(stream=True)

    async def on_a_loop() -> None:
        await adapter.asend(whole, adapter.request_body(whole))
        stream = await adapter.astream(streamed, adapter.request_body(streamed))
        assert [delta async for delta in stream]
        await adapter.async_client().close()  # its connections, before the loop ends

    try:
        adapter.complete(whole)
        adapter.complete(streamed)
        asyncio.run(on_a_loop())
    finally:
        adapter.close()
    sent = [{name.lower() for name in request.headers} for request in fake_provider.requests]
    assert len(sent) == 4
    assert [sorted(name for name in names if name.startswith("x-stainless")) for names in sent] == [[]] * 4
    assert all({"content-type", "user-agent"} <= names for names in sent)
    assert all("authorization" in names or "x-api-key" in names for names in sent)
