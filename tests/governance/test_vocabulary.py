from __future__ import annotations

import pytest

from governance.vocabulary import (
    DataClass,
    Enforcement,
    EnforcementMode,
    Provenance,
    TrustZone,
    least_trusted,
    stricter_ceiling,
)


def test_stored_values_are_exactly_the_designed_vocabulary():
    assert DataClass.values == [
        "public_content",
        "editor_content",
        "source_code",
        "personal_data",
        "internal_configuration",
        "system_diagnostics",
        "secret_adjacent",
    ]
    assert TrustZone.values == ["local", "private_hosted", "external_eu", "external_global"]
    assert Enforcement.values == ["enforce", "observe"]
    assert EnforcementMode.values == ["per_row", "enforce_all"]
    assert Provenance.values == ["provider_reported", "estimated", "unavailable"]


def test_ranks_follow_declaration_order():
    assert [c.rank for c in DataClass] == [0, 1, 2, 3, 4, 5, 6]
    assert [z.rank for z in TrustZone] == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("zone", "accepts"),
    [
        (TrustZone.LOCAL, DataClass.SECRET_ADJACENT),
        (TrustZone.PRIVATE_HOSTED, DataClass.SYSTEM_DIAGNOSTICS),
        (TrustZone.EXTERNAL_EU, DataClass.INTERNAL_CONFIGURATION),
        (TrustZone.EXTERNAL_GLOBAL, DataClass.EDITOR_CONTENT),
    ],
)
def test_each_zone_accepts_up_to_its_designed_class(zone, accepts):
    assert zone.max_data_class == accepts


@pytest.mark.parametrize(
    ("data_class", "ceiling"),
    [
        (DataClass.PUBLIC_CONTENT, TrustZone.EXTERNAL_GLOBAL),
        (DataClass.EDITOR_CONTENT, TrustZone.EXTERNAL_GLOBAL),
        (DataClass.SOURCE_CODE, TrustZone.EXTERNAL_EU),
        (DataClass.PERSONAL_DATA, TrustZone.EXTERNAL_EU),
        (DataClass.INTERNAL_CONFIGURATION, TrustZone.EXTERNAL_EU),
        (DataClass.SYSTEM_DIAGNOSTICS, TrustZone.PRIVATE_HOSTED),
        (DataClass.SECRET_ADJACENT, TrustZone.LOCAL),
    ],
)
def test_class_ceiling_is_the_least_trusted_zone_accepting_it(data_class, ceiling):
    assert data_class.ceiling == ceiling


@pytest.mark.parametrize("raw", ["", None, "External_Global", "cloud", 3, "local "])
def test_unknown_or_empty_zone_parses_as_external_global(raw):
    assert TrustZone.parse(raw) == TrustZone.EXTERNAL_GLOBAL


@pytest.mark.parametrize("raw", ["", None, "secret", "SOURCE_CODE", 2])
def test_unknown_data_class_parses_as_none(raw):
    assert DataClass.parse(raw) is None


@pytest.mark.parametrize(
    ("raw", "mode"),
    [
        ("per_row", EnforcementMode.PER_ROW),
        (" PER_ROW ", EnforcementMode.PER_ROW),
        ("enforce_all", EnforcementMode.ENFORCE_ALL),
        ("per-row", EnforcementMode.ENFORCE_ALL),
        ("perrow", EnforcementMode.ENFORCE_ALL),
        ("observe", EnforcementMode.ENFORCE_ALL),
        ("", EnforcementMode.ENFORCE_ALL),
        (None, EnforcementMode.ENFORCE_ALL),
        (1, EnforcementMode.ENFORCE_ALL),
    ],
)
def test_enforcement_setting_is_parsed_fail_closed(raw, mode):
    assert EnforcementMode.parse(raw) == mode


def test_least_trusted_takes_the_highest_rank_and_defaults_to_external_global():
    assert (
        least_trusted([TrustZone.LOCAL, TrustZone.EXTERNAL_EU, TrustZone.PRIVATE_HOSTED])
        == TrustZone.EXTERNAL_EU
    )
    assert least_trusted([]) == TrustZone.EXTERNAL_GLOBAL


def test_stricter_ceiling_takes_the_more_trusted_zone():
    assert stricter_ceiling(TrustZone.EXTERNAL_EU, TrustZone.PRIVATE_HOSTED) == TrustZone.PRIVATE_HOSTED
    assert stricter_ceiling(TrustZone.LOCAL, TrustZone.EXTERNAL_GLOBAL) == TrustZone.LOCAL
