"""Published versions of a configuration, as an evaluation compares them side by side.

A configuration's published versions are its history records (every publish, and every save before
drafts, is one; decision 0014), numbered by their history id as runs' pins and scores name them. A
version's pins are the ones a run started on it would have had: the configuration at that record's
content (system prompt, snippet tags, skill settings), the snippets that version's tags select now and
the configuration's skills, each at its current published version. So two versions differ by what the
configuration itself changed; what decides whether content may be sent (classification, switches,
models, tools) is read live on both sides, as for every pinned run (agents/runtime/pins.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents.runtime.pins import CONFIGURATION, configuration_pins_take
from catalog.models import Configuration
from evaluations.errors import EvaluationInvalid
from snippets.selectors import snippet_select

VERSIONS_LISTED = 50


@dataclass(frozen=True)
class PublishedVersion:
    """One history record of a configuration: its id, when it was made, by whom and why."""

    history_id: int
    label: str


def published_versions(configuration: Configuration) -> list[PublishedVersion]:
    """The configuration's newest published versions first (at most ``VERSIONS_LISTED``)."""
    records = configuration.history.order_by("-history_id")[:VERSIONS_LISTED]  # type: ignore[attr-defined]
    newest = True
    versions = []
    for record in records:
        reason = record.history_change_reason or "saved"
        when = record.history_date.strftime("%Y-%m-%d %H:%M")
        live = ", live" if newest else ""
        versions.append(
            PublishedVersion(record.history_id, f"Version {record.history_id} ({when}, {reason}{live})")
        )
        newest = False
    return versions


def version_pins(configuration: Configuration, history_id: int) -> list[dict[str, Any]]:
    """The pins of a run of ``configuration`` started on its published version ``history_id``.

    Raises :class:`EvaluationInvalid` when ``history_id`` is not a version of this configuration.
    Call inside the evaluation's transaction (a live row whose newest record does not hold its content
    gets one first, as when a run takes its pins)."""
    record = configuration.history.filter(history_id=history_id).first()  # type: ignore[attr-defined]
    if record is None:
        raise EvaluationInvalid(
            f"Version {history_id} is not a published version of {configuration.identifier!r}."
        )
    selection = snippet_select(tags=record.snippet_tags or [])
    pins = configuration_pins_take(
        configuration=configuration, snippets=selection.snippets, request_skills=()
    )
    return [{**pin, "history_id": history_id} if pin["kind"] == CONFIGURATION else pin for pin in pins]
