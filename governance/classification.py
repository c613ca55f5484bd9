"""The rule every declared classification keeps (a snippet's, a skill's, a configuration prompt's, a
draft's): a known class and ceiling, both declared where the row enforces, the ceiling no looser than
its class allows."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from governance.vocabulary import DataClass, Enforcement, TrustZone


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
