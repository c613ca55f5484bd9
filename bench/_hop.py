"""A bare passthrough hop: the floor for "a Python hop" in bench/gateway.py.

An ASGI application of a few lines under uvicorn that forwards each request to ``HOP_UPSTREAM`` with
httpx and streams the answer back, byte for byte: no authentication, no governance, no database, no
parsing. What the gateway adds over this is what its work costs; what this adds over calling the
provider directly is what any Python proxy pays for the extra hop.
"""

from __future__ import annotations

import os
from typing import Any

import httpx

UPSTREAM = os.environ.get("HOP_UPSTREAM", "http://127.0.0.1:9")
CLIENT = httpx.AsyncClient(base_url=UPSTREAM, timeout=30)
DROPPED = {b"host", b"content-length", b"transfer-encoding", b"connection"}


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    headers = [(k, v) for k, v in scope["headers"] if k.lower() not in DROPPED]
    path = scope["path"].removeprefix("/v1")  # the SDK's base URL ends in /v1, as the upstream's does
    request = CLIENT.build_request(scope["method"], f"{UPSTREAM}{path}", headers=headers, content=body)
    response = await CLIENT.send(request, stream=True)
    kept = [(k.encode(), v.encode()) for k, v in response.headers.items() if k.encode() not in DROPPED]
    await send({"type": "http.response.start", "status": response.status_code, "headers": kept})
    async for chunk in response.aiter_raw():
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await response.aclose()
    await send({"type": "http.response.body", "body": b""})
