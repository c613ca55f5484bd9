"""The governance vocabulary (docs/governance.md). Stored string values are API: never rename them.

Parsing is fail-closed everywhere: an unknown zone is the least trusted zone, an unknown class on an
enforced row is the most sensitive class, an unknown enforcement setting enforces everything.
"""

from __future__ import annotations

from typing import Any

from django.db import models

# Each ranked choices class's members by rank, built on first use (Choices.values and list(cls) build
# a new list on each access, and ranks are read for every source of every step).
_RANKS: dict[type, dict[Any, int]] = {}


class RankedChoices(models.TextChoices):
    """Choices whose declaration order is their rank (0 first)."""

    @property
    def rank(self) -> int:
        ranks = _RANKS.get(type(self))
        if ranks is None:
            ranks = _RANKS[type(self)] = {member: rank for rank, member in enumerate(type(self))}
        return ranks[self]


class DataClass(RankedChoices):
    """How sensitive a piece of content is; declaration order is the rank (0 least sensitive)."""

    PUBLIC_CONTENT = "public_content", "Public content"
    EDITOR_CONTENT = "editor_content", "Editor content"
    SOURCE_CODE = "source_code", "Source code"
    # Found, not declared (decision 0032): a part holding personal data is sent at least at this class.
    PERSONAL_DATA = "personal_data", "Personal data"
    INTERNAL_CONFIGURATION = "internal_configuration", "Internal configuration"
    SYSTEM_DIAGNOSTICS = "system_diagnostics", "System diagnostics"
    SECRET_ADJACENT = "secret_adjacent", "Secret-adjacent"

    @classmethod
    def parse(cls, raw: object) -> DataClass | None:
        """The class named by ``raw``, or None when it is empty or unknown (the caller decides)."""
        if isinstance(raw, str):
            return _DATA_CLASS_BY_VALUE.get(raw)
        return None

    @property
    def ceiling(self) -> TrustZone:
        """The least trusted zone that accepts this class."""
        return _CLASS_CEILING[self]


class TrustZone(RankedChoices):
    """Where a provider runs; declaration order is the rank (0 most trusted)."""

    LOCAL = "local", "Local"
    PRIVATE_HOSTED = "private_hosted", "Private hosted"
    EXTERNAL_EU = "external_eu", "External (EU)"
    EXTERNAL_GLOBAL = "external_global", "External (global)"

    @property
    def max_data_class(self) -> DataClass:
        """The most sensitive class this zone accepts."""
        return _ZONE_ACCEPTS[self]

    def permits(self, data_class: DataClass) -> bool:
        return data_class.rank <= self.max_data_class.rank

    @classmethod
    def parse(cls, raw: object) -> TrustZone:
        """Fail-closed: an empty or unknown zone is ``external_global``."""
        if isinstance(raw, str):
            return _TRUST_ZONE_BY_VALUE.get(raw, cls.EXTERNAL_GLOBAL)
        return cls.EXTERNAL_GLOBAL


class Integrity(RankedChoices):
    """How far a source may steer what a model does; declaration order is the rank (0 most trusted).
    Derived content takes the least trusted level of what was sent for it (DESIGN §4, "Content and
    integrity"), as its class takes the most sensitive."""

    TRUSTED = "trusted", "Trusted"  # published editor material, configuration prompts, reviewed skills
    CALLER = "caller", "Caller"  # the API client's own input and context
    UNTRUSTED = "untrusted", "Untrusted"  # tool and MCP results, fetched content, documents as data

    @classmethod
    def parse(cls, raw: object) -> Integrity:
        """Fail-closed: an empty or unknown level is ``untrusted``."""
        if isinstance(raw, str):
            return _INTEGRITY_BY_VALUE.get(raw, cls.UNTRUSTED)
        return cls.UNTRUSTED


class UntrustedActionPolicy(models.TextChoices):
    """What a configuration does with a consequential tool call made while untrusted content is in the
    step's context: it is never executed on the model's word."""

    APPROVE = "approve", "Wait for a person's approval"
    REFUSE = "refuse", "Refuse the call"


class Enforcement(models.TextChoices):
    """Per-row enforcement. New rows enforce; rows that predate classification observe."""

    ENFORCE = "enforce", "Enforce"
    OBSERVE = "observe", "Observe"


class EnforcementMode(models.TextChoices):
    """The global ``GOVERNANCE_ENFORCEMENT`` switch."""

    PER_ROW = "per_row", "Per row"
    ENFORCE_ALL = "enforce_all", "Enforce all"

    @classmethod
    def parse(cls, raw: object) -> EnforcementMode:
        """Only an exact ``per_row`` (case and surrounding space ignored) relaxes; anything else,
        including a typo or a non-string, enforces everything."""
        if isinstance(raw, str) and raw.strip().lower() == cls.PER_ROW.value:
            return cls.PER_ROW
        return cls.ENFORCE_ALL


class Provenance(models.TextChoices):
    """Where a usage figure came from."""

    PROVIDER_REPORTED = "provider_reported", "Provider reported"
    ESTIMATED = "estimated", "Estimated"
    UNAVAILABLE = "unavailable", "Unavailable"


class Outcome(models.TextChoices):
    """What the check decided for one source."""

    ALLOWED = "allowed", "Allowed"
    OBSERVED = "observed", "Observed"
    REFUSED = "refused", "Refused"


class Decision(models.TextChoices):
    """The kind of a governance event."""

    CONTEXT_BLOCKED = "context_blocked", "Context blocked"
    TOOL_DENIED = "tool_denied", "Tool denied"
    RESPONSE_BLOCKED = "response_blocked", "Response blocked"
    SECRET_REDACTED = "secret_redacted", "Secret redacted"
    INJECTION_FLAGGED = "injection_flagged", "Injection flagged"
    # A secret the per-part redaction missed was caught by the guard pass over the serialised body.
    LATE_REDACTION = "late_redaction", "Late redaction"
    # A row's classification was loosened or tightened (who, before and after).
    RECLASSIFIED = "reclassified", "Reclassified"
    # A send found no active target (provider or model switched off); nothing was sent.
    MODEL_INACTIVE = "model_inactive", "Model inactive"
    # A send did not fit its client's daily budget (figures only); nothing was sent.
    BUDGET_EXHAUSTED = "budget_exhausted", "Budget exhausted"
    # A send whose sources exceed its primary model's zone went to the configuration's trusted model.
    ROUTED = "routed", "Routed to the trusted model"
    # A tool could not do its work (its MCP server was down or slow); the model was told so.
    TOOL_FAILED = "tool_failed", "Tool failed"
    # A tool call that needs a person's approval: asked for, then approved, denied or expired.
    APPROVAL_REQUESTED = "approval_requested", "Tool approval requested"
    APPROVAL_GRANTED = "approval_granted", "Tool call approved"
    APPROVAL_DENIED = "approval_denied", "Tool call denied"
    APPROVAL_EXPIRED = "approval_expired", "Tool approval expired"
    # Personal data found in a send: parts raised to personal_data, values sent as placeholders, or
    # found in a reply (kinds and counts only: decision 0039).
    PERSONAL_DATA_FOUND = "personal_data_found", "Personal data found"
    PSEUDONYMIZED = "pseudonymized", "Personal data pseudonymized"
    # An editor kept a class below personal_data on a row whose text holds personal data.
    PERSONAL_DATA_OVERRIDE = "personal_data_override", "Personal data class overridden"


class PersonalDataOutcome(models.TextChoices):
    """What a configuration does with personal data that a send's zone, or its receiver, may not
    receive (decision 0039): refuse the send, route it to the configuration's trusted model, or send
    the values as placeholders and restore them in the reply for a receiver that may see them."""

    REFUSE = "refuse", "Refuse"
    ROUTE = "route", "Route to the trusted model"
    PSEUDONYMIZE = "pseudonymize", "Pseudonymize and restore"


class EventOutcome(models.TextChoices):
    ENFORCED = "enforced", "Enforced"
    OBSERVED = "observed", "Observed"


class SourceKind(models.TextChoices):
    """Every kind of content that can reach the wire (docs/governance.md, "Sources")."""

    SYSTEM_PROMPT = "system_prompt", "Configuration system prompt"
    SNIPPET = "snippet", "Snippet"
    SKILL = "skill", "Skill"
    CALLER_CONTEXT = "caller_context", "Caller context item"
    TASK_INPUT = "task_input", "Task input"
    TOOL_OUTPUT = "tool_output", "Tool output"
    # An earlier reply of the run, re-sent in a later step: its class is the reply's label.
    ASSISTANT_TURN = "assistant_turn", "Earlier assistant turn"


# Parsing runs for every source of every step; Choices.values builds a new list on each access.
_DATA_CLASS_BY_VALUE = {member.value: member for member in DataClass}
_TRUST_ZONE_BY_VALUE = {member.value: member for member in TrustZone}
_INTEGRITY_BY_VALUE = {member.value: member for member in Integrity}
_ZONE_ACCEPTS = {
    TrustZone.LOCAL: DataClass.SECRET_ADJACENT,
    TrustZone.PRIVATE_HOSTED: DataClass.SYSTEM_DIAGNOSTICS,
    TrustZone.EXTERNAL_EU: DataClass.INTERNAL_CONFIGURATION,
    TrustZone.EXTERNAL_GLOBAL: DataClass.EDITOR_CONTENT,
}


def least_trusted(zones: list[TrustZone] | tuple[TrustZone, ...]) -> TrustZone:
    """The least trusted of ``zones``; an empty list is ``external_global`` (nothing known)."""
    return max(zones, key=lambda zone: zone.rank, default=TrustZone.EXTERNAL_GLOBAL)


def most_sensitive(classes: list[DataClass] | tuple[DataClass, ...]) -> DataClass:
    """The most sensitive of ``classes``; none at all is ``public_content`` (nothing was read)."""
    return max(classes, key=lambda data_class: data_class.rank, default=DataClass.PUBLIC_CONTENT)


def least_integrity(levels: list[Integrity] | tuple[Integrity, ...]) -> Integrity:
    """The least trusted of ``levels``; none at all is ``trusted`` (nothing was read)."""
    return max(levels, key=lambda level: level.rank, default=Integrity.TRUSTED)


def stricter_ceiling(a: TrustZone, b: TrustZone) -> TrustZone:
    """Of two ceilings, the one that allows fewer zones (the more trusted zone)."""
    return a if a.rank <= b.rank else b


# The least trusted zone accepting each class, derived once from the zone table above.
_CLASS_CEILING = {
    data_class: max(
        (zone for zone in TrustZone if data_class.rank <= _ZONE_ACCEPTS[zone].rank),
        key=lambda zone: zone.rank,
    )
    for data_class in DataClass
}
