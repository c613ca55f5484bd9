"""Writes for snippets. Every save scans for prompt injection and records a history version."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.db import transaction

from governance.actors import Actor, history_stamp
from governance.drafts import draft_discard
from governance.guardrails.injection import max_severity, scan_for_injection
from governance.personal_data_override import personal_data_guard
from governance.services import reclassification_guard
from snippets.models import Snippet, Tag, normalise_tag

logger = logging.getLogger(__name__)


def tags_resolve(names: Sequence[str]) -> list[Tag]:
    """Normalised tags for ``names``, created when new; blanks and duplicates are dropped."""
    wanted = list(dict.fromkeys(normalise_tag(name) for name in names if normalise_tag(name)))
    tags = []
    for name in wanted:
        tag, _ = Tag.objects.get_or_create(name=name)
        tags.append(tag)
    return tags


def _scan(snippet: Snippet) -> None:
    findings = scan_for_injection("\n".join([snippet.name, snippet.description, snippet.text]))
    snippet.injection_findings = [
        {"rule": f.rule, "severity": f.severity.value, "start": f.start, "end": f.end, "excerpt": f.excerpt}
        for f in findings
    ]
    severity = max_severity(findings)
    snippet.injection_severity = severity.value if severity else ""


@transaction.atomic
def snippet_save(
    *, snippet: Snippet, actor: Actor, reason: str, tag_names: Sequence[str] | None = None
) -> Snippet:
    """Validate, scan and save ``snippet`` (new or changed), then set its tags when given.

    Raises ``ValidationError``, or ``ReclassifyForbidden`` when ``actor`` may not loosen the
    classification, before anything is stored. Findings of the injection scan are kept on the row for
    editors to review; they do not block the save (snippets are editor-authored). The history version
    names ``actor`` and ``reason``; a changed classification is also a ``reclassified`` event.
    """
    with reclassification_guard(row=snippet, actor=actor):
        snippet.full_clean()
        _scan(snippet)
        history_stamp(snippet, actor=actor, reason=reason)
        snippet.save()
        if tag_names is not None:
            snippet.tags.set(tags_resolve(tag_names))
    return snippet


@transaction.atomic
def snippet_create(
    *,
    actor: Actor,
    identifier: str,
    name: str,
    text: str,
    data_class: str,
    ceiling: str,
    description: str = "",
    tag_names: Sequence[str] = (),
    is_active: bool = True,
    sorting: int = 0,
    metadata: dict[str, object] | None = None,
    personal_data_override: bool = False,
) -> Snippet:
    """A new snippet. It enforces (the model default): only rows that predate classification observe.

    Personal data in its name, description or text under a class below ``personal_data`` raises
    ``PersonalDataFound`` unless ``personal_data_override``, which is recorded with the save (as the
    admin's form asks, ``governance/personal_data_override.py``)."""
    snippet = Snippet(
        identifier=identifier,
        name=name,
        description=description,
        text=text,
        data_class=data_class,
        ceiling=ceiling,
        is_active=is_active,
        sorting=sorting,
        metadata={} if metadata is None else metadata,
    )
    personal_data_guard(row=snippet, actor=actor, override=personal_data_override)
    return snippet_save(snippet=snippet, actor=actor, reason="created", tag_names=tag_names)


@transaction.atomic
def snippet_update(
    *,
    snippet: Snippet,
    actor: Actor,
    name: str | None = None,
    description: str | None = None,
    text: str | None = None,
    data_class: str | None = None,
    ceiling: str | None = None,
    enforcement: str | None = None,
    is_active: bool | None = None,
    sorting: int | None = None,
    metadata: dict[str, object] | None = None,
    tag_names: Sequence[str] | None = None,
    personal_data_override: bool = False,
) -> Snippet:
    """Change the given fields (None leaves a field as it is) and the tags, and save a new version.

    Raises as :func:`snippet_save` does: lowering the class, loosening the ceiling or relaxing
    enforcement to observe needs an actor who may declassify; tightening is anyone's. Raises as
    :func:`snippet_create` does when the snippet, as changed, holds personal data under a class below
    ``personal_data`` and ``personal_data_override`` is not given (every save asks, as the admin does).
    """
    changes = {
        "name": name,
        "description": description,
        "text": text,
        "data_class": data_class,
        "ceiling": ceiling,
        "enforcement": enforcement,
        "is_active": is_active,
        "sorting": sorting,
        "metadata": metadata,
    }
    for field, value in changes.items():
        if value is not None:
            setattr(snippet, field, value)
    personal_data_guard(row=snippet, actor=actor, override=personal_data_override)
    return snippet_save(snippet=snippet, actor=actor, reason="updated", tag_names=tag_names)


@transaction.atomic
def snippet_delete(*, snippet: Snippet, actor: Actor) -> None:
    """Delete ``snippet``; its history keeps a deletion version naming ``actor``. Configurations select
    snippets by tag, so no configuration row refers to it. Its pending draft goes with it."""
    history_stamp(snippet, actor=actor, reason="deleted")
    draft_discard(snippet)
    snippet.delete()
    logger.info("snippet %s deleted by %s", snippet.identifier, actor.label)
