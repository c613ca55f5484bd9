"""A tool that requires approval, for the services suite, registered in the worker process with ``-I``.

It appends the call's ``id`` to the file named by ``TEST_TOOL_LOG``, so a test can count how often it
really ran, whichever process ran it.
"""

from __future__ import annotations

import os

from tools.registry import REGISTRY, Tool, ToolEffect


def send_reviewed_note(context, arguments):
    with open(os.environ["TEST_TOOL_LOG"], "a") as log:
        log.write(f"{arguments.get('id')}\n")
    return "sent"


SEND_REVIEWED_NOTE = Tool(
    name="send_reviewed_note",
    description="Send a note to the team once a person approved it.",
    parameters={"type": "object", "properties": {"id": {"type": "string"}}},
    group="content",
    effect=ToolEffect.NON_IDEMPOTENT_WRITE,
    handler=send_reviewed_note,
    requires_approval=True,
)

if REGISTRY.get(SEND_REVIEWED_NOTE.name) is None:
    REGISTRY.register(SEND_REVIEWED_NOTE)
