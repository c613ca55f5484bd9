"""Writes for the agents app, by topic: API clients and configurations (:mod:`.clients`), runs and
the requests they are built from (:mod:`.runs`), governed calls outside any run (:mod:`.completions`),
stored responses of the Responses API (:mod:`.responses`), evaluations of drafts (:mod:`.evaluations`).

The app's services are imported from here.
"""

from agents.services.approvals import approval_decide, approvals_expire
from agents.services.clients import (
    TOKEN_PREFIX,
    IssuedClient,
    api_client_create,
    api_client_rotate_token,
    configuration_save,
)
from agents.services.completions import (
    Completion,
    CompletionCall,
)
from agents.services.evaluations import evaluation_run, evaluation_start
from agents.services.flow import answers_declassify
from agents.services.responses import stored_response_create
from agents.services.runs import (
    CallerContextItem,
    run_cancel,
    run_create,
    send_request_build,
    send_request_from_messages,
)

__all__ = [
    "TOKEN_PREFIX",
    "CallerContextItem",
    "Completion",
    "CompletionCall",
    "IssuedClient",
    "answers_declassify",
    "api_client_create",
    "api_client_rotate_token",
    "approval_decide",
    "approvals_expire",
    "configuration_save",
    "evaluation_run",
    "evaluation_start",
    "run_cancel",
    "run_create",
    "send_request_build",
    "send_request_from_messages",
    "stored_response_create",
]
