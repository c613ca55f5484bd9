"""The pure decision: the 6x4 permit matrix, the fail-closed table, and a property."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from hypothesis import given
from hypothesis import strategies as st

from governance.classification import validate_classification
from governance.policy import Source, decide, effective_ceiling, enforcement_mode
from governance.vocabulary import DataClass, Enforcement, EnforcementMode, Outcome, SourceKind, TrustZone

# The zone table of docs/governance.md, written out rather than derived, so the code is checked against it.
PERMITS = {
    DataClass.PUBLIC_CONTENT: {
        "local": True,
        "private_hosted": True,
        "external_eu": True,
        "external_global": True,
    },
    DataClass.EDITOR_CONTENT: {
        "local": True,
        "private_hosted": True,
        "external_eu": True,
        "external_global": True,
    },
    DataClass.SOURCE_CODE: {
        "local": True,
        "private_hosted": True,
        "external_eu": True,
        "external_global": False,
    },
    DataClass.INTERNAL_CONFIGURATION: {
        "local": True,
        "private_hosted": True,
        "external_eu": True,
        "external_global": False,
    },
    DataClass.SYSTEM_DIAGNOSTICS: {
        "local": True,
        "private_hosted": True,
        "external_eu": False,
        "external_global": False,
    },
    DataClass.SECRET_ADJACENT: {
        "local": True,
        "private_hosted": False,
        "external_eu": False,
        "external_global": False,
    },
}

MATRIX = [
    (data_class, TrustZone(zone), allowed)
    for data_class, row in PERMITS.items()
    for zone, allowed in row.items()
]


def snippet(
    data_class: str | None, *, ceiling: str | None = None, enforcement: str = Enforcement.ENFORCE
) -> Source:
    return Source(SourceKind.SNIPPET, "brand-voice", data_class, ceiling, enforcement)


@pytest.mark.parametrize(("data_class", "zone", "allowed"), MATRIX, ids=lambda v: str(v))
def test_permit_matrix_in_enforce_mode(data_class, zone, allowed):
    decision = decide([snippet(data_class)], zone, EnforcementMode.PER_ROW)
    assert decision.sources[0].outcome == (Outcome.ALLOWED if allowed else Outcome.REFUSED)
    assert decision.permitted is allowed
    assert zone.permits(data_class) is allowed


@pytest.mark.parametrize(("data_class", "zone", "allowed"), MATRIX, ids=lambda v: str(v))
def test_permit_matrix_in_observe_mode_never_refuses(data_class, zone, allowed):
    decision = decide([snippet(data_class, enforcement=Enforcement.OBSERVE)], zone, EnforcementMode.PER_ROW)
    assert decision.sources[0].outcome == (Outcome.ALLOWED if allowed else Outcome.OBSERVED)
    assert decision.permitted is True


def test_observe_row_is_enforced_under_enforce_all():
    source = snippet(DataClass.SECRET_ADJACENT, enforcement=Enforcement.OBSERVE)
    decision = decide([source], TrustZone.EXTERNAL_EU, EnforcementMode.ENFORCE_ALL)
    assert decision.sources[0].outcome == Outcome.REFUSED
    assert decision.sources[0].enforcement == Enforcement.ENFORCE


@pytest.mark.parametrize("stored", ["", None, "top_secret", "SECRET_ADJACENT"])
def test_unknown_or_missing_class_on_enforce_row_counts_as_secret_adjacent(stored):
    refused = decide([snippet(stored)], TrustZone.PRIVATE_HOSTED, EnforcementMode.PER_ROW)
    assert refused.sources[0].outcome == Outcome.REFUSED
    assert refused.sources[0].data_class is None
    assert refused.sources[0].ceiling == TrustZone.LOCAL
    assert "treated as secret_adjacent" in refused.sources[0].reason
    allowed = decide([snippet(stored)], TrustZone.LOCAL, EnforcementMode.PER_ROW)
    assert allowed.sources[0].outcome == Outcome.ALLOWED


@pytest.mark.parametrize("stored", ["", None, "corrupt"])
def test_undeclared_class_on_observe_row_is_observed_and_sent(stored):
    decision = decide(
        [snippet(stored, enforcement=Enforcement.OBSERVE)], TrustZone.EXTERNAL_GLOBAL, EnforcementMode.PER_ROW
    )
    assert decision.sources[0].outcome == Outcome.OBSERVED
    assert decision.sources[0].reason == "undeclared data class"
    assert decision.permitted is True


def test_unknown_enforcement_value_on_a_row_enforces():
    decision = decide(
        [snippet(DataClass.SECRET_ADJACENT, enforcement="maybe")], TrustZone.EXTERNAL_EU, "per_row"
    )
    assert decision.sources[0].outcome == Outcome.REFUSED


def test_declared_ceiling_stricter_than_class_wins():
    source = snippet(DataClass.PUBLIC_CONTENT, ceiling=TrustZone.PRIVATE_HOSTED)
    assert decide([source], TrustZone.PRIVATE_HOSTED, EnforcementMode.PER_ROW).permitted is True
    refused = decide([source], TrustZone.EXTERNAL_EU, EnforcementMode.PER_ROW)
    assert refused.sources[0].outcome == Outcome.REFUSED
    assert refused.sources[0].ceiling == TrustZone.PRIVATE_HOSTED


def test_stored_ceiling_looser_than_class_is_clamped_to_the_class():
    # A corrupt row (validation forbids this) must not widen what is sent.
    assert effective_ceiling(DataClass.SECRET_ADJACENT, TrustZone.EXTERNAL_GLOBAL) == TrustZone.LOCAL


def test_unknown_stored_ceiling_means_local():
    assert effective_ceiling(DataClass.PUBLIC_CONTENT, "the-cloud") == TrustZone.LOCAL


def test_decision_lists_refused_and_observed_sources_in_order():
    sources = [
        Source(SourceKind.SYSTEM_PROMPT, "cfg", DataClass.PUBLIC_CONTENT),
        Source(SourceKind.SNIPPET, "a", DataClass.SOURCE_CODE, enforcement=Enforcement.OBSERVE),
        Source(SourceKind.SKILL, "b", DataClass.SYSTEM_DIAGNOSTICS),
        Source(SourceKind.TASK_INPUT, "input", DataClass.SECRET_ADJACENT),
    ]
    decision = decide(sources, TrustZone.EXTERNAL_GLOBAL, EnforcementMode.PER_ROW)
    assert [s.outcome for s in decision.sources] == [
        Outcome.ALLOWED,
        Outcome.OBSERVED,
        Outcome.REFUSED,
        Outcome.REFUSED,
    ]
    assert [s.identifier for s in decision.refused] == ["b", "input"]
    assert [s.identifier for s in decision.observed] == ["a"]


@pytest.mark.parametrize(
    ("setting", "mode"),
    [
        ("per_row", EnforcementMode.PER_ROW),
        ("enforce_all", EnforcementMode.ENFORCE_ALL),
        ("per_rwo", EnforcementMode.ENFORCE_ALL),
    ],
)
def test_enforcement_mode_reads_the_setting_fail_closed(settings, setting, mode):
    settings.GOVERNANCE_ENFORCEMENT = setting
    assert enforcement_mode() == mode


def test_unreadable_enforcement_setting_means_enforce_all(settings):
    del settings.GOVERNANCE_ENFORCEMENT
    assert enforcement_mode() == EnforcementMode.ENFORCE_ALL


def test_validation_rejects_a_ceiling_looser_than_the_class():
    with pytest.raises(ValidationError) as info:
        validate_classification(
            data_class=DataClass.SOURCE_CODE,
            ceiling=TrustZone.EXTERNAL_GLOBAL,
            enforcement=Enforcement.ENFORCE,
        )
    assert info.value.message_dict == {
        "ceiling": [
            "Ceiling 'external_global' is looser than data class 'source_code' allows "
            "(at most 'external_eu')."
        ]
    }


def test_validation_requires_class_and_ceiling_on_enforced_rows_only():
    with pytest.raises(ValidationError) as info:
        validate_classification(data_class="", ceiling="", enforcement=Enforcement.ENFORCE)
    assert info.value.message_dict == {
        "data_class": ["An enforced row must declare its data class."],
        "ceiling": ["An enforced row must declare its trust-zone ceiling."],
    }
    validate_classification(data_class="", ceiling="", enforcement=Enforcement.OBSERVE)


def test_validation_rejects_unknown_values():
    with pytest.raises(ValidationError) as info:
        validate_classification(data_class="secretish", ceiling="mars", enforcement=Enforcement.OBSERVE)
    assert info.value.message_dict == {
        "data_class": ["Unknown data class 'secretish'."],
        "ceiling": ["Unknown trust zone 'mars'."],
    }


raw_classes = st.one_of(st.sampled_from(DataClass.values), st.none(), st.text(max_size=12))
raw_ceilings = st.one_of(st.sampled_from(TrustZone.values), st.none(), st.just(""), st.text(max_size=12))
raw_enforcement = st.one_of(st.sampled_from(Enforcement.values), st.text(max_size=8))


@given(
    data_class=raw_classes,
    ceiling=raw_ceilings,
    enforcement=raw_enforcement,
    zone=st.sampled_from(list(TrustZone)),
    mode=st.sampled_from(list(EnforcementMode)),
)
def test_property_never_allows_a_class_above_the_zone_ceiling_when_enforced(
    data_class, ceiling, enforcement, zone, mode
):
    decision = decide([snippet(data_class, ceiling=ceiling, enforcement=enforcement)], zone, mode)
    verdict = decision.sources[0]
    enforced = mode == EnforcementMode.ENFORCE_ALL or enforcement != Enforcement.OBSERVE
    if not enforced:
        assert verdict.outcome != Outcome.REFUSED
        return
    effective = DataClass.parse(data_class) or DataClass.SECRET_ADJACENT
    if not zone.permits(effective):
        assert verdict.outcome == Outcome.REFUSED
    if verdict.outcome == Outcome.ALLOWED:
        assert zone.permits(effective)
        assert zone.rank <= verdict.ceiling.rank


def test_groups_hold_every_source_once_and_the_per_source_view_is_built_in_order():
    """A decision keeps one verdict per distinct classification with its sources' positions; the
    per-source decisions, and those a rule acted on, come back in the order the sources were given."""
    sources = [
        Source(SourceKind.SNIPPET, "a", "public_content", None, Enforcement.ENFORCE),
        Source(SourceKind.SNIPPET, "b", "secret_adjacent", None, Enforcement.ENFORCE),
        Source(SourceKind.SNIPPET, "c", "public_content", None, Enforcement.ENFORCE),
        Source(SourceKind.SNIPPET, "d", None, None, Enforcement.OBSERVE),
        Source(SourceKind.SNIPPET, "e", "secret_adjacent", None, Enforcement.ENFORCE),
    ]
    decision = decide(sources, TrustZone.EXTERNAL_EU, EnforcementMode.PER_ROW)

    assert [(g.outcome, g.positions) for g in decision.groups] == [
        (Outcome.ALLOWED, (0, 2)),
        (Outcome.REFUSED, (1, 4)),
        (Outcome.OBSERVED, (3,)),
    ]
    assert [(s.identifier, s.outcome) for s in decision.sources] == [
        ("a", Outcome.ALLOWED),
        ("b", Outcome.REFUSED),
        ("c", Outcome.ALLOWED),
        ("d", Outcome.OBSERVED),
        ("e", Outcome.REFUSED),
    ]
    assert [s.identifier for s in decision.acted_on] == ["b", "d", "e"]
    assert [s.identifier for s in decision.refused] == ["b", "e"]
    assert [s.identifier for s in decision.observed] == ["d"]
    assert (decision.count(Outcome.ALLOWED), decision.count(Outcome.REFUSED)) == (2, 2)
    assert not decision.permitted


def test_an_all_allowed_decision_builds_no_per_source_decision_until_one_is_read():
    sources = [Source(SourceKind.TOOL_OUTPUT, f"call_{n}", "public_content") for n in range(200)]
    decision = decide(sources, TrustZone.EXTERNAL_GLOBAL, EnforcementMode.ENFORCE_ALL)

    assert decision.permitted and decision.acted_on == ()
    assert "sources" not in vars(decision)  # the cached per-source view is not built yet
    assert len(decision.sources) == 200 and "sources" in vars(decision)
