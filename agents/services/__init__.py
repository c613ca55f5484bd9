"""Writes for the runtime, by topic: runs and the requests they are built from (:mod:`.runs`), and
deciding the tool calls that wait for approval (:mod:`.approvals`).

The app's services are imported from here.
"""

from agents.services.approvals import approval_decide, approvals_expire
from agents.services.runs import (
    CallerContextItem,
    run_cancel,
    run_create,
    send_request_build,
    send_request_from_messages,
)

__all__ = [
    "CallerContextItem",
    "approval_decide",
    "approvals_expire",
    "run_cancel",
    "run_create",
    "send_request_build",
    "send_request_from_messages",
]
