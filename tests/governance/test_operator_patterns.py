"""``governance/screening.py``: the operator's patterns (``PERSONAL_DATA_PATTERNS``) are read afresh
whenever the setting is replaced, as ``override_settings`` and a restart replace it, though their key is
not rebuilt for every text screened."""

from __future__ import annotations

from django.test import override_settings

from governance.screening import found_in, operator_patterns

TEXT = "Escalate the ticket of EMP-204518 to the night shift."


def kinds(text: str) -> list[str]:
    """The operator's pattern names found in ``text`` (every finding here is one of theirs)."""
    return [finding.pattern for finding in found_in(text)]


def test_a_replaced_setting_is_read_again_and_the_old_one_after_it():
    assert operator_patterns() == ()
    assert kinds(TEXT) == []
    with override_settings(PERSONAL_DATA_PATTERNS={"employee_id": r"EMP-\d{6}"}):
        assert [pattern.name for pattern in operator_patterns()] == ["employee_id"]
        assert kinds(TEXT) == ["employee_id"]
        with override_settings(PERSONAL_DATA_PATTERNS={"ticket": r"night shift"}):
            assert kinds(TEXT) == ["ticket"]
        assert kinds(TEXT) == ["employee_id"]
    assert operator_patterns() == ()
    assert kinds(TEXT) == []
