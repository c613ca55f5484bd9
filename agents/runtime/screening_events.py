"""Screening as one pipeline (decision 0039): the screeners every part of a send and every reply pass,
what each may do, and the governance event and metric of every action taken.

Two screeners run today, in this order, on every part the planner sends (``agents/runtime/plan.py``)
and on every reply (``agents/runtime/send.py``, ``agents/runtime/streaming.py``):

| screener | outcomes | chosen by |
|---|---|---|
| ``secrets`` | redact | nobody: mandatory, on every part and reply, no setting switches it off |
| ``personal_data`` | raise the part's class (then the gate refuses or routes), pseudonymize and restore | the configuration's ``personal_data_outcome`` |

Each screener's result for a send is counts by kind (never a value); :func:`screening_events_record`
writes one event per action and kind (``secret_redacted``, ``personal_data_found``,
``pseudonymized``) and counts it in ``govctx_screening_actions_total``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agents.runtime.redactions import redaction_events_record
from governance.services import EventContext, enforced_event_record
from governance.telemetry import screening_counted
from governance.vocabulary import Decision, PersonalDataOutcome, TrustZone

SECRETS = "secrets"
PERSONAL_DATA = "personal_data"


@dataclass(frozen=True)
class Screener:
    """One screener of the pipeline: its name, the outcomes it may take, and whether it may be off."""

    name: str
    outcomes: tuple[str, ...]
    mandatory: bool


PIPELINE = (
    Screener(SECRETS, ("redact",), mandatory=True),
    Screener(PERSONAL_DATA, tuple(PersonalDataOutcome.values), mandatory=False),
)


def screening_events_record(
    *,
    redacted: Mapping[str, int],
    raised: Mapping[str, int],
    pseudonymized: Mapping[str, int],
    context: EventContext,
    zone: TrustZone | None,
) -> None:
    """Record what a send's screeners did: the secrets redacted (``secret_redacted``, as before), the
    personal data that raised a part (``personal_data_found``) and the values sent as placeholders
    (``pseudonymized``): one event per kind, how many, never what."""
    redaction_events_record(counts=dict(redacted), context=context, zone=zone)
    screening_counted(SECRETS, "redact", redacted)
    _personal_data_record(Decision.PERSONAL_DATA_FOUND, "raise", raised, context, zone)
    _personal_data_record(Decision.PSEUDONYMIZED, "pseudonymize", pseudonymized, context, zone)


def reply_screening_record(*, found: Mapping[str, int], context: EventContext, zone: TrustZone) -> None:
    """Record the personal data found in a reply (counted; an event per kind)."""
    _personal_data_record(Decision.PERSONAL_DATA_FOUND, "found_in_reply", found, context, zone)


def _personal_data_record(
    decision: Decision, action: str, counts: Mapping[str, int], context: EventContext, zone: TrustZone | None
) -> None:
    screening_counted(PERSONAL_DATA, action, counts)
    for kind, count in sorted(counts.items()):
        reason = f"{count} x {kind} ({action})"
        enforced_event_record(context=context, decision=decision, zone=zone, reason=reason)
