"""Stored responses (``/api/openai/v1/responses``): kept per client for ``previous_response_id``
(read with ``agents.selectors.stored_response_get_for_client``),
with the reply's labels, so a continuation sends the earlier reply as a source at its label
(docs/decisions/0024-the-responses-api.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.runtime.redactions import Redactions
from catalog.models import ApiClient, Configuration
from context_assembly.messages import Message
from gateway.models import StoredResponse
from gateway.services.completions import Completion
from governance.vocabulary import DataClass, Provenance

SECRET = DataClass.SECRET_ADJACENT.value


def stored_response_create(
    *,
    response_id: str,
    api_client: ApiClient,
    configuration: Configuration,
    completion: Completion,
    conversation: Sequence[dict[str, Any]],
    reply_message: dict[str, Any],
) -> StoredResponse:
    """Store the answered response: ``conversation`` (the stored entries it continued, then its new
    input) redacted as a send redacts it, then its reply (already redacted) at the reply's labels. A
    reply without a decision (never the case for an answered send) would be stored as
    ``secret_adjacent``, the strictest reading."""
    decision = completion.decision
    usage = completion.reply.usage
    reported = usage.provenance == Provenance.PROVIDER_REPORTED
    # The receipt's labels: the decision's, raised where the reply holds personal data.
    label = completion.receipt.get("label", SECRET) if decision is not None else SECRET
    receiver_label = completion.receipt.get("receiver_label", SECRET) if decision is not None else SECRET
    observed = decision.label_observed if decision is not None else False
    reply = {
        "message": reply_message,
        "data_class": label,
        "receiver_class": receiver_label,
        "observed": observed,
        "kind": "assistant_turn",
        "name": f"{response_id}.output",
    }
    redactions = Redactions()
    stored = [{**entry, "message": _redacted(entry["message"], redactions)} for entry in conversation]
    return StoredResponse.objects.create(
        response_id=response_id,
        api_client=api_client,
        configuration=configuration,
        request_id=completion.request_id,
        label=label,
        receiver_label=receiver_label,
        label_observed=observed,
        conversation=[*stored, reply],
        input_tokens=usage.prompt_tokens if reported else None,
        output_tokens=usage.completion_tokens if reported else None,
    )


def _redacted(message: dict[str, Any], redactions: Redactions) -> dict[str, Any]:
    """``message`` as it may be stored: its secrets redacted, as every send redacts them anyway."""
    developer = message.get("role") == "developer"
    redacted = redactions.message(
        Message.from_openai({**message, "role": "system"} if developer else message)
    )
    wire = redacted.to_openai()
    return {**wire, "role": "developer"} if developer else wire
