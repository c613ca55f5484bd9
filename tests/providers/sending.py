"""A call sent in each of the four ways an adapter sends one: whole and streamed, blocking and on a
loop (the SDKs' two clients), for tests that read what reached the fake provider."""

from __future__ import annotations

import asyncio
from typing import Any

from providers.base import SdkAdapter
from providers.values import ProviderCall


def sent_four_ways(adapter: SdkAdapter[Any, Any, Any], whole: ProviderCall, streamed: ProviderCall) -> None:
    """``whole`` and ``streamed`` through the blocking client, then both on a loop (in that order);
    the adapter is closed afterwards."""

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
