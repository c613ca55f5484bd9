"""API answers have a receiver: the client that asked, in its trust zone.

Everything an API answer shows passes the same check as what a provider is sent:
:func:`governance.policy.receiver_may_read` against the receiver's zone. A request made by anything
but an API client with a readable ``trust_zone`` is read as ``external_global``, the least trusted
zone. :class:`WithheldAboveZone` applies that to a read serializer of a classified row: above the
zone, the row is still listed (identifier, name, classification, state) but its texts are left out and
``withheld`` is true. Whatever text it does show is redacted, as a provider request is: an editor may
have left a secret in a row, and no secret leaves the service.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from governance.guardrails.redaction import redact
from governance.policy import Source, receiver_may_read
from governance.vocabulary import TrustZone


def receiver_zone(request: object) -> TrustZone:
    """The zone of whoever made ``request``: an API client's ``trust_zone``, else ``external_global``."""
    return TrustZone.parse(getattr(getattr(request, "user", None), "trust_zone", None))


class WithheldAboveZone(serializers.Serializer):
    """A read serializer of a classified row (one with ``as_source()``) that leaves out
    ``withheld_fields`` when the row's class is above the receiver's zone. The receiver is the
    ``request`` in the serializer's context; without one, the zone is ``external_global``."""

    withheld_fields: tuple[str, ...] = ()
    withheld = serializers.SerializerMethodField(
        help_text="True: the row is classified above this client's trust zone, so its texts are left out."
    )

    def get_withheld(self, instance: Any) -> bool:
        return not self._readable(instance)

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data = super().to_representation(instance)
        if data["withheld"]:
            for name in self.withheld_fields:
                data.pop(name, None)
        return {key: _redacted(value) for key, value in data.items()}

    def _readable(self, instance: Any) -> bool:
        source: Source = instance.as_source()
        [readable] = receiver_may_read([source], receiver_zone(self.context.get("request")))
        return readable


def _redacted(value: Any) -> Any:
    """``value`` with every string in it redacted (lists and objects walked)."""
    if isinstance(value, str):
        return redact(value).text if value else value
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    if isinstance(value, dict):
        return {key: _redacted(item) for key, item in value.items()}
    return value
