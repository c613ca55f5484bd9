"""Personal data in a classified row's own text, before it is live (decision 0039): what was found
and where (kind, field and line, never the value), and the explicit, recorded override that keeps a
declared class below ``personal_data``. The admin's forms (``governance/personal_data_admin.py``)
and the API's writes ask the same question here.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from governance.actors import Actor
from governance.classified import ClassifiedBase
from governance.errors import PersonalDataFound
from governance.screening import found_in
from governance.services import EventContext, enforced_event_record
from governance.vocabulary import DataClass, Decision

OVERRIDE_FIELD = "personal_data_override"


@dataclass(frozen=True)
class TextFinding:
    """Personal data of ``kind`` in field ``field`` at line ``line`` (1-based); never the value."""

    field: str
    line: int
    kind: str

    def __str__(self) -> str:
        return f"{self.kind} in {self.field}, line {self.line}"

    def as_dict(self) -> dict[str, str | int]:
        return {"kind": self.kind, "field": self.field, "line": self.line}


def text_findings(texts: dict[str, str]) -> list[TextFinding]:
    """The personal data in each of ``texts`` (field name to text), by field then position."""
    return [
        TextFinding(field, text.count("\n", 0, finding.start) + 1, str(finding.kind))
        for field, text in texts.items()
        for finding in found_in(text or "")
    ]


def row_findings(row: ClassifiedBase) -> list[TextFinding]:
    """The personal data in ``row``'s screened fields, as they are set (saved or not)."""
    return text_findings({name: str(getattr(row, name, "") or "") for name in row.screened_fields})


def below_personal_data(declared: str) -> bool:
    """Whether a declared class ranks below ``personal_data`` (a send would raise it)."""
    parsed = DataClass.parse(str(declared or ""))
    return parsed is not None and parsed.rank < DataClass.PERSONAL_DATA.rank


def personal_data_refusal(found: list[TextFinding], *, field: str) -> str:
    """What an editor or a client is told when the override is needed and not given."""
    return (
        f"Personal data found ({'; '.join(map(str, found))}): choose personal data or a stricter "
        f"{field}, or set {OVERRIDE_FIELD} to keep the declared class (recorded)."
    )


def personal_data_guard(*, row: ClassifiedBase, actor: Actor, override: bool) -> list[TextFinding]:
    """Check ``row`` before it is saved: personal data in its text under a class below
    ``personal_data`` raises :class:`PersonalDataFound` (kinds and places, never a value) unless
    ``override``, which is then recorded as a ``personal_data_override`` event. Call it inside the
    save's transaction, so an override is recorded only with the save. Returns the findings."""
    found = row_findings(row)
    if not found or not below_personal_data(row.classification.data_class):
        return found
    if not override:
        field = row.classification_field("data_class")
        raise PersonalDataFound(
            personal_data_refusal(found, field=field),
            extra={"findings": [finding.as_dict() for finding in found], "override_field": OVERRIDE_FIELD},
        )
    personal_data_override_record(row=row, actor=actor, found=found)
    return found


def personal_data_override_record(*, row: ClassifiedBase, actor: Actor, found: list[TextFinding]) -> None:
    """The ``personal_data_override`` event: who kept which class over how many findings."""
    enforced_event_record(
        context=EventContext(correlation_id=uuid.uuid4().hex, api_client=actor.api_client),
        decision=Decision.PERSONAL_DATA_OVERRIDE,
        reason=f"{row.source_kind} {row.identifier} kept {row.classification.data_class} over "
        f"{len(found)} finding(s) by {actor.label}",
    )
