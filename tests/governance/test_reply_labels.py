"""A reply's label and the receiver's part of the gate, decided by the one ``decide()``: the label is the
most sensitive class among the sources (unknown or undeclared counts as secret_adjacent), the label
for the receiver leaves out what the receiver supplied itself, a declassification lowers both, and a
source the receiver did not supply is refused above the receiver's zone."""

from __future__ import annotations

import pytest

from governance.policy import Receiver, Source, decide
from governance.vocabulary import DataClass, Enforcement, EnforcementMode, Outcome, SourceKind, TrustZone

PER_ROW = EnforcementMode.PER_ROW


def snippet(identifier: str, data_class: str | None, enforcement: str = Enforcement.ENFORCE) -> Source:
    return Source(SourceKind.SNIPPET, identifier, data_class, None, enforcement)


def task(data_class: str) -> Source:
    return Source(SourceKind.TASK_INPUT, "task_input", data_class)


def turn(label: str, for_receiver: str) -> Source:
    return Source(SourceKind.ASSISTANT_TURN, "transcript[0]", label, receiver_class=for_receiver)


@pytest.mark.parametrize(
    ("sources", "label", "receiver_label"),
    [
        ([], DataClass.PUBLIC_CONTENT, DataClass.PUBLIC_CONTENT),
        ([snippet("a", "editor_content"), snippet("b", "source_code")], "source_code", "source_code"),
        ([snippet("a", "editor_content"), snippet("b", None)], "secret_adjacent", "secret_adjacent"),
        (
            [snippet("a", "editor_content"), snippet("b", "no-such-class")],
            "secret_adjacent",
            "secret_adjacent",
        ),
        ([snippet("a", None, Enforcement.OBSERVE)], "secret_adjacent", "secret_adjacent"),
        (
            [snippet("a", "editor_content"), task("system_diagnostics")],
            "system_diagnostics",
            "editor_content",
        ),
        (
            [
                Source(SourceKind.CALLER_CONTEXT, "context[0]", "internal_configuration"),
                task("public_content"),
            ],
            "internal_configuration",
            "public_content",
        ),
        (
            [Source(SourceKind.TOOL_OUTPUT, "c1", "system_diagnostics"), task("public_content")],
            "system_diagnostics",
            "system_diagnostics",
        ),
        ([turn("secret_adjacent", "source_code"), task("editor_content")], "secret_adjacent", "source_code"),
    ],
)
def test_the_label_is_the_most_sensitive_class_sent_and_the_receiver_label_leaves_out_its_own(
    sources, label, receiver_label
):
    decision = decide(sources, TrustZone.LOCAL, PER_ROW, Receiver(TrustZone.LOCAL))
    assert (decision.label, decision.receiver_label) == (label, receiver_label)


def test_a_declassification_lowers_both_labels_to_its_zones_most_sensitive_class():
    sources = [snippet("guide", "system_diagnostics"), task("source_code")]
    receiver = Receiver(TrustZone.EXTERNAL_GLOBAL, declassified_to=TrustZone.EXTERNAL_EU)
    decision = decide(sources, TrustZone.LOCAL, PER_ROW, receiver)
    assert (decision.label, decision.receiver_label) == ("internal_configuration", "internal_configuration")
    lowered = decide(sources, TrustZone.LOCAL, PER_ROW, Receiver(TrustZone.LOCAL, TrustZone.EXTERNAL_GLOBAL))
    assert (lowered.label, lowered.receiver_label) == ("editor_content", "editor_content")


def test_a_declassification_never_lowers_a_secret_adjacent_label():
    sources = [snippet("guide", "internal_configuration"), task("secret_adjacent")]
    receiver = Receiver(TrustZone.LOCAL, declassified_to=TrustZone.EXTERNAL_GLOBAL)
    decision = decide(sources, TrustZone.LOCAL, PER_ROW, receiver)
    # The receiver's own secret-adjacent input still labels the reply for everyone else.
    assert (decision.label, decision.receiver_label) == ("secret_adjacent", "editor_content")
    undeclared = decide([snippet("legacy", None)], TrustZone.LOCAL, PER_ROW, receiver)
    assert (undeclared.label, undeclared.receiver_label) == ("secret_adjacent", "secret_adjacent")


@pytest.mark.parametrize("data_class", ["secret_adjacent", None, "no-such-class"])
def test_a_declassification_covering_the_receiver_never_lets_secret_adjacent_through(data_class):
    sources = [
        snippet("guide", "internal_configuration"),
        snippet("keys", data_class),
        task("public_content"),
    ]
    receiver = Receiver(
        TrustZone.EXTERNAL_GLOBAL, declassified_to=TrustZone.EXTERNAL_GLOBAL, name="API client 'crm'"
    )
    decision = decide(sources, TrustZone.LOCAL, PER_ROW, receiver)
    assert [(s.identifier, s.outcome, s.by_receiver) for s in decision.sources] == [
        ("guide", Outcome.ALLOWED, False),
        ("keys", Outcome.REFUSED, True),
        ("task_input", Outcome.ALLOWED, False),
    ]
    assert decision.refused[0].reason.startswith(
        "the receiver (API client 'crm') is in zone external_global: "
    )
    assert decision.receiver_label == DataClass.SECRET_ADJACENT


def test_a_source_above_the_receivers_zone_is_refused_naming_the_receiver():
    sources = [snippet("runbook", "internal_configuration"), task("public_content")]
    decision = decide(
        sources, TrustZone.LOCAL, PER_ROW, Receiver(TrustZone.EXTERNAL_GLOBAL, name="API client 'crm'")
    )
    [refused] = decision.refused
    assert (refused.identifier, refused.outcome, refused.by_receiver) == ("runbook", Outcome.REFUSED, True)
    assert refused.reason == (
        "the receiver (API client 'crm') is in zone external_global: "
        "external_global is less trusted than ceiling external_eu"
    )
    assert decide(sources, TrustZone.LOCAL, PER_ROW).permitted  # without a receiver: the call's zone only


def test_what_the_receiver_supplied_never_refuses_its_own_reply():
    sources = [
        Source(SourceKind.CALLER_CONTEXT, "context[0]", "secret_adjacent"),
        task("system_diagnostics"),
        snippet("tone", "editor_content"),
    ]
    decision = decide(sources, TrustZone.LOCAL, PER_ROW, Receiver(TrustZone.EXTERNAL_GLOBAL))
    assert decision.permitted
    assert (decision.label, decision.receiver_label) == ("secret_adjacent", "editor_content")


def test_an_earlier_turn_is_decided_for_the_receiver_at_its_receiver_label():
    mine = decide(
        [turn("secret_adjacent", "editor_content")],
        TrustZone.LOCAL,
        PER_ROW,
        Receiver(TrustZone.EXTERNAL_GLOBAL),
    )
    assert mine.permitted
    theirs = decide(
        [turn("source_code", "source_code")], TrustZone.LOCAL, PER_ROW, Receiver(TrustZone.EXTERNAL_GLOBAL)
    )
    assert [s.by_receiver for s in theirs.refused] == [True]


def test_an_observed_row_is_observed_for_the_call_and_refused_for_a_receiver_above_it():
    legacy = snippet("legacy", "system_diagnostics", Enforcement.OBSERVE)
    for_call = decide([legacy], TrustZone.EXTERNAL_EU, PER_ROW)
    assert [s.outcome for s in for_call.sources] == [Outcome.OBSERVED]
    assert for_call.label_observed is True
    for_receiver = decide([legacy], TrustZone.LOCAL, PER_ROW, Receiver(TrustZone.EXTERNAL_EU))
    assert [(s.outcome, s.by_receiver) for s in for_receiver.sources] == [(Outcome.REFUSED, True)]


@pytest.mark.parametrize(
    ("declassified_to", "permitted"),
    [
        (None, False),
        (TrustZone.PRIVATE_HOSTED, False),  # declared deliverable to a more trusted zone only
        (TrustZone.EXTERNAL_EU, True),
        (TrustZone.EXTERNAL_GLOBAL, True),
    ],
)
def test_only_a_declassification_covering_the_receivers_zone_lifts_the_receiver_gate(
    declassified_to, permitted
):
    sources = [snippet("guide", "system_diagnostics")]
    receiver = Receiver(TrustZone.EXTERNAL_EU, declassified_to=declassified_to)
    assert decide(sources, TrustZone.LOCAL, PER_ROW, receiver).permitted is permitted


def test_the_call_zone_still_refuses_whatever_the_declassification():
    sources = [snippet("keys", "secret_adjacent")]
    receiver = Receiver(TrustZone.LOCAL, declassified_to=TrustZone.EXTERNAL_GLOBAL)
    decision = decide(sources, TrustZone.EXTERNAL_GLOBAL, PER_ROW, receiver)
    assert [(s.outcome, s.by_receiver) for s in decision.sources] == [(Outcome.REFUSED, False)]
