"""A non-idempotent tool for the services suite, registered in the worker process with ``-I``.

It appends a line to the file named by ``TEST_TOOL_LOG`` before it sleeps, so a test can count how
often it really ran, whichever process ran it.
"""

from __future__ import annotations

import os
import time

from tools.registry import REGISTRY, Tool, ToolEffect


def send_note(context, arguments):
    with open(os.environ["TEST_TOOL_LOG"], "a") as log:
        log.write(f"{arguments.get('id')}\n")
    time.sleep(float(os.environ.get("TEST_TOOL_SECONDS", "0")))
    return "noted"


SEND_NOTE = Tool(
    name="send_note",
    description="Send a note to the team (not idempotent).",
    parameters={"type": "object", "properties": {"id": {"type": "string"}}},
    group="content",
    effect=ToolEffect.NON_IDEMPOTENT_WRITE,
    handler=send_note,
)

if REGISTRY.get(SEND_NOTE.name) is None:
    REGISTRY.register(SEND_NOTE)
