"""Declassifying a configuration's answers: a privileged, recorded act (DESIGN §4, "Information flow").

A configuration may declare that its answers may be delivered down to a named zone (for example, an
internal style guide shapes public answers). That lowers every reply's label to the zone's most
sensitive class and lifts the receiver's part of the gate for receivers in that zone or a more trusted
one. Nothing else lowers a label. Loosening the declaration (setting it, or naming a less trusted
zone) needs the ``governance:classify`` scope or the ``governance.reclassify`` permission; tightening
it (clearing it, or naming a more trusted zone) is anyone's. Every change is a ``reclassified``
governance event naming the actor, in the same transaction as the change.
"""

from __future__ import annotations

import logging
import uuid

from django.db import transaction

from catalog.models import Configuration
from governance.actors import CLASSIFY_SCOPE, RECLASSIFY_PERMISSION, Actor
from governance.errors import ReclassifyForbidden
from governance.models import GovernanceEvent
from governance.services import EventContext, governance_event_record
from governance.vocabulary import Decision, EventOutcome, TrustZone

logger = logging.getLogger(__name__)

FIELD = "answers_deliverable_to"


def answers_declassify(
    *, configuration: Configuration, zone: TrustZone | None, actor: Actor
) -> GovernanceEvent | None:
    """Declare ``configuration``'s answers deliverable down to ``zone`` (None: clear the declaration).

    Raises :class:`ReclassifyForbidden` (nothing stored, nothing recorded) when the change loosens
    and ``actor`` may not declassify. Returns the ``reclassified`` event, or None when nothing changed.
    """
    with transaction.atomic():
        locked = Configuration.objects.select_for_update().get(pk=configuration.pk)
        before = TrustZone(locked.answers_deliverable_to) if locked.answers_deliverable_to else None
        if before == zone:
            return None
        if _loosens(before, zone) and not actor.may_declassify:
            privilege = f"the {CLASSIFY_SCOPE} scope or the {RECLASSIFY_PERMISSION} permission"
            raise ReclassifyForbidden(
                f"configuration {locked.identifier!r}: declaring its answers deliverable to a less "
                f"trusted zone needs {privilege}.",
                extra={"fields": [FIELD], "required_scope": CLASSIFY_SCOPE},
            )
        Configuration.objects.filter(pk=locked.pk).update(**{FIELD: zone.value if zone else ""})
        event = governance_event_record(
            context=EventContext(
                correlation_id=uuid.uuid4().hex,
                configuration=locked.identifier,
                api_client=actor.api_client,
            ),
            decision=Decision.RECLASSIFIED,
            outcome=EventOutcome.ENFORCED,
            zone=zone,
            reason=f"answers deliverable to {_named(before)} -> {_named(zone)} by {actor.label}",
        )
    configuration.answers_deliverable_to = zone.value if zone else ""
    logger.info(
        "configuration %s answers declassified to %s by %s", locked.identifier, _named(zone), actor.label
    )
    return event


def _loosens(before: TrustZone | None, after: TrustZone | None) -> bool:
    if after is None:
        return False
    return before is None or after.rank > before.rank


def _named(zone: TrustZone | None) -> str:
    return zone.value if zone is not None else "(their label)"
