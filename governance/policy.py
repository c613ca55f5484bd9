"""The pure governance decision: may these classified sources go to this trust zone?

Nothing here touches the database or the network. ``governance.services`` records what this module
decides. Every caller (agent runtime, preview API, readiness report, admin) uses :func:`decide`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ValidationError

from config.caches import cache_register
from governance.vocabulary import (
    DataClass,
    Enforcement,
    EnforcementMode,
    Outcome,
    SourceKind,
    TrustZone,
    stricter_ceiling,
)


@dataclass(frozen=True)
class Source:
    """One classified piece of what would reach the wire.

    ``data_class``, ``ceiling`` and ``enforcement`` are the raw stored values: :func:`decide` parses
    them fail-closed, so a corrupt row can never widen what is sent.
    """

    kind: SourceKind
    identifier: str
    data_class: str | None
    ceiling: str | None = None
    enforcement: str = Enforcement.ENFORCE


@dataclass(frozen=True)
class SourceDecision:
    kind: SourceKind
    identifier: str
    data_class: DataClass | None  # None: the row declared no (known) class
    ceiling: TrustZone  # effective ceiling
    enforcement: Enforcement  # as applied, after the global mode
    outcome: Outcome
    reason: str


@dataclass(frozen=True)
class ContextDecision:
    zone: TrustZone
    mode: EnforcementMode
    sources: tuple[SourceDecision, ...]

    @property
    def permitted(self) -> bool:
        return not self.refused

    @property
    def refused(self) -> tuple[SourceDecision, ...]:
        return tuple(s for s in self.sources if s.outcome == Outcome.REFUSED)

    @property
    def observed(self) -> tuple[SourceDecision, ...]:
        return tuple(s for s in self.sources if s.outcome == Outcome.OBSERVED)


def enforcement_mode() -> EnforcementMode:
    """The global switch, read at call time. Unreadable or misspelled means ``enforce_all``."""
    try:
        raw = settings.GOVERNANCE_ENFORCEMENT
    except Exception:
        return EnforcementMode.ENFORCE_ALL
    return EnforcementMode.parse(raw)


def effective_ceiling(data_class: DataClass, declared_ceiling: object) -> TrustZone:
    """The stricter of the declared ceiling and the ceiling the class implies.

    An empty declared ceiling means the class ceiling. An unknown declared ceiling (a corrupt row)
    means ``local``: the strictest reading of a declaration we cannot read.
    """
    if declared_ceiling in (None, ""):
        return data_class.ceiling
    declared = (
        TrustZone(declared_ceiling)
        if isinstance(declared_ceiling, str) and declared_ceiling in TrustZone.values
        else TrustZone.LOCAL
    )
    return stricter_ceiling(declared, data_class.ceiling)


def validate_classification(
    *, data_class: str, ceiling: str, enforcement: str, field_prefix: str = ""
) -> None:
    """The model-level rule for every classified row (snippet, skill, configuration prompt).

    Raises ``ValidationError`` keyed by ``field_prefix`` + ``data_class`` / ``ceiling``: an enforced
    row must declare a known class and ceiling, and a declared ceiling may not be looser than its
    class allows.
    """
    # Plain strings from here on: enum members would render as their repr in messages.
    data_class, ceiling, enforcement = str(data_class or ""), str(ceiling or ""), str(enforcement or "")
    errors: dict[str, str] = {}
    parsed = DataClass.parse(data_class)
    if data_class and parsed is None:
        errors["data_class"] = f"Unknown data class {data_class!r}."
    if ceiling and ceiling not in TrustZone.values:
        errors["ceiling"] = f"Unknown trust zone {ceiling!r}."
    if enforcement == Enforcement.ENFORCE:
        if not data_class:
            errors.setdefault("data_class", "An enforced row must declare its data class.")
        if not ceiling:
            errors.setdefault("ceiling", "An enforced row must declare its trust-zone ceiling.")
    if parsed is not None and ceiling in TrustZone.values:
        allowed = parsed.ceiling
        if TrustZone(ceiling).rank > allowed.rank:
            errors["ceiling"] = (
                f"Ceiling {ceiling!r} is looser than data class {parsed.value!r} allows "
                f"(at most {allowed.value!r})."
            )
    if errors:
        raise ValidationError({f"{field_prefix}{field}": message for field, message in errors.items()})


def decide(
    sources: list[Source] | tuple[Source, ...], zone: TrustZone, mode: EnforcementMode
) -> ContextDecision:
    """Decide every source against ``zone``. Pure; O(len(sources)).

    Enforced rows (and every row under ``enforce_all``): an unknown or missing class counts as
    ``secret_adjacent``; a zone beyond the effective ceiling refuses. Observed rows are never
    refused: a violation, or a missing class, is ``observed`` and the source is still sent.
    """
    verdicts: dict[tuple[object, ...], Verdict] = {}  # this call's, so each key meets the LRU once
    return ContextDecision(
        zone=zone, mode=mode, sources=tuple(_decide_one(source, zone, mode, verdicts) for source in sources)
    )


def receiver_may_read(sources: list[Source] | tuple[Source, ...], zone: TrustZone) -> tuple[bool, ...]:
    """For each source, whether its text may be shown to a receiver in ``zone`` (an API client, a
    stream): :func:`decide` under ``enforce_all``, so only ``allowed`` passes. Observe exists for
    sends of rows that predate classification; it never widens what another receiver is shown."""
    decision = decide(sources, zone, EnforcementMode.ENFORCE_ALL)
    return tuple(item.outcome == Outcome.ALLOWED for item in decision.sources)


Verdict = tuple[DataClass | None, TrustZone, Enforcement, Outcome, str]


def _decide_one(
    source: Source, zone: TrustZone, mode: EnforcementMode, verdicts: dict[tuple[object, ...], Verdict]
) -> SourceDecision:
    key = (source.data_class, source.ceiling, source.enforcement, zone, mode)
    verdict = verdicts.get(key)
    if verdict is None:
        verdict = verdicts[key] = _memo_verdict(*key)
    declared, ceiling, applied, outcome, reason = verdict
    return SourceDecision(source.kind, source.identifier, declared, ceiling, applied, outcome, reason)


def _verdict(
    data_class: str | None,
    declared_ceiling: str | None,
    enforcement: str,
    zone: TrustZone,
    mode: EnforcementMode,
) -> Verdict:
    """The decision for one classification in one zone: a pure function of its arguments."""
    observing = mode == EnforcementMode.PER_ROW and enforcement == Enforcement.OBSERVE
    applied = Enforcement.OBSERVE if observing else Enforcement.ENFORCE
    declared = DataClass.parse(data_class)
    if declared is None:
        if observing:
            return None, TrustZone.LOCAL, applied, Outcome.OBSERVED, "undeclared data class"
        effective_class = DataClass.SECRET_ADJACENT
        unknown = "undeclared" if data_class in (None, "") else "unknown"
        reason_prefix = f"{unknown} data class treated as {effective_class.value}; "
    else:
        effective_class = declared
        reason_prefix = ""
    ceiling = effective_ceiling(effective_class, declared_ceiling)
    if zone.rank <= ceiling.rank:
        return declared, ceiling, applied, Outcome.ALLOWED, f"{zone.value} is within ceiling {ceiling.value}"
    outcome = Outcome.OBSERVED if observing else Outcome.REFUSED
    reason = f"{reason_prefix}{zone.value} is less trusted than ceiling {ceiling.value}"
    return declared, ceiling, applied, outcome, reason


# A long transcript repeats the same few classifications many times: a pure function, memoised.
_memo_verdict = cache_register(
    lru_cache(maxsize=4096)(_verdict),
    name="governance_verdicts",
    key="(stored data class, declared ceiling, enforcement, zone, enforcement mode)",
    invalidation=(
        "none needed: a verdict is a pure function of its key (the GOVERNANCE_ENFORCEMENT setting is "
        "read at every decision and is part of the key)"
    ),
)
