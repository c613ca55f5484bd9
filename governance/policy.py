"""The pure governance decision: may these classified sources go to this trust zone?

Nothing here touches the database or the network. ``governance.services`` records what this module
decides. Every caller (agent runtime, preview API, readiness report, admin) uses :func:`decide`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from operator import attrgetter, itemgetter

from django.conf import settings

from config.caches import cache_register
from governance.integrity import source_integrity
from governance.vocabulary import (
    DataClass,
    Enforcement,
    EnforcementMode,
    Integrity,
    Outcome,
    SourceKind,
    TrustZone,
    least_integrity,
    most_sensitive,
    stricter_ceiling,
)

# What a receiver supplies itself: its task input, its caller context and its conversation turns.
# Such a source never makes a reply undeliverable to that same receiver (it still raises the label).
RECEIVER_SUPPLIED = frozenset({SourceKind.TASK_INPUT, SourceKind.CALLER_CONTEXT})
# The most sensitive class a declassification of answers lowers or lets through to its receivers.
# Secret-adjacent material (keys, credentials, what sits next to them) is never declassified: a
# recorded act may widen who reads internal material, not launder secrets into public answers.
MOST_DECLASSIFIABLE = DataClass.SYSTEM_DIAGNOSTICS


# Slots: a run's step builds one per message of its transcript, and a decision one per source; a
# slotted frozen dataclass is built in about two thirds of the time.
@dataclass(frozen=True, slots=True)
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
    # An earlier assistant turn only: its label for the receiver it was made for (what that receiver
    # did not supply itself). None: the receiver reads it at ``data_class``.
    receiver_class: str | None = None
    integrity: str = ""  # its integrity level as stored; empty: its kind's (governance/integrity.py)
    # Set when personal data found in the source's text raised ``data_class`` (decision 0032): the
    # class it declared, and what was found by kind and count (never a value).
    declared_class: str | None = None
    personal_data: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Receiver:
    """Who a send's reply is delivered to: the API client that asked (its ``trust_zone``), or the
    zone an operator names for a run started without one. ``declassified_to``: the configuration
    declares its answers deliverable down to that zone (a recorded, privileged act); a receiver in it,
    or in a more trusted zone, then reads every class up to :data:`MOST_DECLASSIFIABLE` whatever its
    zone, and the reply's label is lowered to that zone's most sensitive class. ``secret_adjacent``
    (an unknown class included) is never lowered nor lifted: no declassification makes secret-shaped
    material deliverable outside the zone its class allows."""

    zone: TrustZone
    declassified_to: TrustZone | None = None
    name: str = ""  # how a refusal names the receiver ("API client 'crm'"); never content

    @property
    def declassified(self) -> bool:
        """Whether the configuration's declassification covers this receiver's zone."""
        return self.declassified_to is not None and self.declassified_to.rank >= self.zone.rank

    def lifts(self, data_class: DataClass) -> bool:
        """Whether the declassification covers this receiver for content of ``data_class`` (its zone
        is covered and the class is declassifiable), whatever the content's ceiling."""
        return self.declassified and data_class.rank <= MOST_DECLASSIFIABLE.rank

    def admits(self, data_class: DataClass) -> bool:
        """Whether content of ``data_class`` may be delivered to this receiver."""
        return self.zone.permits(data_class) or self.lifts(data_class)

    def lowered(self, label: DataClass) -> DataClass:
        """``label`` as the declassification lowers it (nothing else lowers a label); a label above
        :data:`MOST_DECLASSIFIABLE` is kept."""
        if self.declassified_to is None or label.rank > MOST_DECLASSIFIABLE.rank:
            return label
        ceiling = self.declassified_to.max_data_class
        return label if label.rank <= ceiling.rank else ceiling


@dataclass(frozen=True, slots=True)
class SourceDecision:
    kind: SourceKind
    identifier: str
    data_class: DataClass | None  # None: the row declared no (known) class
    ceiling: TrustZone  # effective ceiling
    enforcement: Enforcement  # as applied, after the global mode
    outcome: Outcome
    reason: str
    by_receiver: bool = False  # refused for the receiver's zone, not the call's


@dataclass(frozen=True, slots=True)
class SourceGroup:
    """The sources of a decision that share one classification, so one verdict: their kind, the
    verdict (what each of their :class:`SourceDecision` holds besides kind and identifier) and their
    positions in the decision's sources, in order. A long transcript makes a few groups, not one per
    message."""

    kind: SourceKind
    verdict: _Outcome
    positions: tuple[int, ...]
    integrity: Integrity = Integrity.UNTRUSTED

    @property
    def data_class(self) -> DataClass | None:
        return self.verdict[0]

    @property
    def outcome(self) -> Outcome:
        return self.verdict[3]


@dataclass(frozen=True)
class ContextDecision:
    """The verdict on every source, and the label a reply to these sources carries: ``label`` the
    most sensitive class among them (an undeclared or unknown class counts as ``secret_adjacent``),
    ``receiver_label`` the same over what the receiver did not supply itself; both lowered by the
    receiver's declassification, if any. Without a receiver both are the plain maximum.

    The verdicts are kept per distinct classification (``groups``, over the decided ``inputs``); the
    per-source view (:attr:`sources`) is built when first read, and :attr:`refused` and
    :attr:`observed` build only theirs: a step over a long transcript reads neither when all is
    allowed."""

    zone: TrustZone
    mode: EnforcementMode
    inputs: tuple[Source, ...]
    groups: tuple[SourceGroup, ...]  # the verdicts by classification, in order of first appearance
    receiver: Receiver | None = None
    label: DataClass = DataClass.SECRET_ADJACENT
    receiver_label: DataClass = DataClass.SECRET_ADJACENT
    integrity: Integrity = Integrity.UNTRUSTED
    id: str = ""  # set when the decision is recorded (assert_permitted); the receipt names it
    # The label comes from a source sent under observe (a legacy row): an earlier turn carrying it is
    # observed, not refused, where that row was (DESIGN §3, "Enforcement").
    label_observed: bool = False

    @cached_property
    def sources(self) -> tuple[SourceDecision, ...]:
        """Every source's decision, in the order the sources were given."""
        return self._decided(self.groups)

    @property
    def permitted(self) -> bool:
        return all(group.outcome != Outcome.REFUSED for group in self.groups)

    @property
    def refused(self) -> tuple[SourceDecision, ...]:
        return self._decided(g for g in self.groups if g.outcome == Outcome.REFUSED)

    @property
    def observed(self) -> tuple[SourceDecision, ...]:
        return self._decided(g for g in self.groups if g.outcome == Outcome.OBSERVED)

    @property
    def acted_on(self) -> tuple[SourceDecision, ...]:
        """The sources a rule acted on (refused or observed), in order."""
        return self._decided(g for g in self.groups if g.outcome != Outcome.ALLOWED)

    def count(self, outcome: Outcome) -> int:
        """How many sources have ``outcome``."""
        return sum(len(group.positions) for group in self.groups if group.outcome == outcome)

    def _decided(self, groups: Iterable[SourceGroup]) -> tuple[SourceDecision, ...]:
        """The decisions of the sources of ``groups``, in the order the sources were given."""
        decided = [(position, group.verdict) for group in groups for position in group.positions]
        decided.sort(key=itemgetter(0))
        inputs = self.inputs
        return tuple(
            SourceDecision(inputs[position].kind, inputs[position].identifier, *verdict)
            for position, verdict in decided
        )


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


def decide(
    sources: list[Source] | tuple[Source, ...],
    zone: TrustZone,
    mode: EnforcementMode,
    receiver: Receiver | None = None,
) -> ContextDecision:
    """Decide every source against ``zone``, and against ``receiver``'s zone. Pure; O(len(sources)).

    Enforced rows (and every row under ``enforce_all``): an unknown or missing class counts as
    ``secret_adjacent``; a zone beyond the effective ceiling refuses. Observed rows are never
    refused for the call's zone: a violation, or a missing class, is ``observed`` and the source is
    still sent. The receiver's part of the gate (DESIGN §4, "Information flow"): a source the receiver
    did not supply is also decided for the receiver's zone, under ``enforce_all`` as every receiver
    reads (observe never widens what a receiver is shown), unless a declassification covers that
    zone and the source's class (:meth:`Receiver.lifts`); a refusal there names the receiver.
    The decision's ``integrity`` is the least trusted level among the sources (none: ``trusted``).
    """
    # A receiver no less trusted than the call's zone adds nothing where the call's zone allows.
    below = receiver is not None and receiver.zone.rank > zone.rank
    # A long transcript repeats a few classifications: each distinct one is decided once per call, and
    # its sources' positions kept beside its verdict.
    outcomes: dict[_Key, tuple[_Outcome, list[int]]] = {}
    for position, source in enumerate(sources):
        key: _Key = _classification(source)
        entry = outcomes.get(key)
        if entry is None:
            entry = outcomes[key] = (_decide_one(source, zone, mode, receiver, below), [])
        entry[1].append(position)
    # Every source has one of the distinct classifications: the labels are read from those.
    label = _most_sensitive_of({key[0] for key in outcomes})
    receiver_label = _most_sensitive_of(
        {key[0] if key[3] is None else key[3] for key in outcomes if key[4] not in RECEIVER_SUPPLIED}
    )
    allowed = _most_sensitive_of(
        {key[0] for key, (outcome, _) in outcomes.items() if outcome[3] == Outcome.ALLOWED}
    )
    if receiver is not None:
        label, receiver_label, allowed = (receiver.lowered(c) for c in (label, receiver_label, allowed))
    observed = label.rank > allowed.rank
    groups = tuple(
        SourceGroup(key[4], outcome, tuple(positions), source_integrity(key[4], key[5]))
        for key, (outcome, positions) in outcomes.items()
    )
    return ContextDecision(
        zone,
        mode,
        tuple(sources),
        groups,
        receiver,
        label,
        receiver_label,
        least_integrity([group.integrity for group in groups]),
        label_observed=observed,
    )


def _most_sensitive_of(raw_classes: set[str | None]) -> DataClass:
    """The most sensitive of the stored class values (a transcript repeats a few, so each distinct
    value is parsed once); an unknown or missing one is ``secret_adjacent``."""
    return most_sensitive([DataClass.parse(raw) or DataClass.SECRET_ADJACENT for raw in raw_classes])


def receiver_may_read(sources: list[Source] | tuple[Source, ...], zone: TrustZone) -> tuple[bool, ...]:
    """For each source, whether its text may be shown to a receiver in ``zone`` (an API client, a
    stream): :func:`decide` under ``enforce_all``, so only ``allowed`` passes. Observe exists for
    sends of rows that predate classification; it never widens what another receiver is shown."""
    decision = decide(sources, zone, EnforcementMode.ENFORCE_ALL)
    return tuple(item.outcome == Outcome.ALLOWED for item in decision.sources)


Verdict = tuple[DataClass | None, TrustZone, Enforcement, Outcome, str]
# A source's classification, as decide() tells sources apart: class, ceiling, enforcement, the class a
# receiver reads it at, kind, integrity.
_Key = tuple[str | None, str | None, str, str | None, SourceKind, str]
_classification = attrgetter("data_class", "ceiling", "enforcement", "receiver_class", "kind", "integrity")
# A source's decision without its kind and identifier: the verdict and whether the receiver refused it.
_Outcome = tuple[DataClass | None, TrustZone, Enforcement, Outcome, str, bool]


def _decide_one(
    source: Source, zone: TrustZone, mode: EnforcementMode, receiver: Receiver | None, receiver_below: bool
) -> _Outcome:
    declared, ceiling, applied, outcome, reason = _memo_verdict(
        source.data_class, source.ceiling, source.enforcement, zone, mode
    )
    if receiver is None or outcome == Outcome.REFUSED or source.kind in RECEIVER_SUPPLIED:
        return declared, ceiling, applied, outcome, reason, False
    if not receiver_below and outcome == Outcome.ALLOWED:
        # Allowed for a zone no more trusted than the receiver's: allowed for it too.
        return declared, ceiling, applied, outcome, reason, False
    if source.receiver_class is None:
        read_as, read_ceiling, _, for_receiver, why = _memo_verdict(
            source.data_class, source.ceiling, Enforcement.ENFORCE, receiver.zone, EnforcementMode.ENFORCE_ALL
        )
    else:
        read_as, read_ceiling, _, for_receiver, why = _memo_verdict(
            source.receiver_class, None, Enforcement.ENFORCE, receiver.zone, EnforcementMode.ENFORCE_ALL
        )
    if for_receiver != Outcome.REFUSED or receiver.lifts(read_as or DataClass.SECRET_ADJACENT):
        return declared, ceiling, applied, outcome, reason, False
    named = f" ({receiver.name})" if receiver.name else ""
    return (
        read_as,
        read_ceiling,
        Enforcement.ENFORCE,
        Outcome.REFUSED,
        f"the receiver{named} is in zone {receiver.zone.value}: {why}",
        True,
    )


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
