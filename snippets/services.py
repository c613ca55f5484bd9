"""Writes for snippets. Every save scans for prompt injection and records a history version."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from governance.guardrails.injection import max_severity, scan_for_injection
from governance.services import PromotionResult
from governance.vocabulary import Enforcement
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
    *, snippet: Snippet, tag_names: Sequence[str] | None = None, actor: Any = None, reason: str = ""
) -> Snippet:
    """Validate, scan and save ``snippet`` (new or changed), then set its tags when given.

    Raises ``ValidationError`` before anything is stored. Findings of the injection scan are kept
    on the row for editors to review; they do not block the save (snippets are editor-authored).
    """
    snippet.full_clean()
    _scan(snippet)
    snippet._history_user = actor  # type: ignore[attr-defined]
    snippet._change_reason = reason  # type: ignore[attr-defined]
    snippet.save()
    if tag_names is not None:
        snippet.tags.set(tags_resolve(tag_names))
    return snippet


def snippet_create(*, actor: Any = None, tag_names: Sequence[str] = (), **fields: Any) -> Snippet:
    return snippet_save(snippet=Snippet(**fields), tag_names=tag_names, actor=actor, reason="created")


def snippet_promote_enforcement(*, snippets: Sequence[Snippet], actor: Any) -> PromotionResult:
    """Switch ``snippets`` to enforce, each recorded as a history version with the actor.

    A snippet without a declared class and ceiling cannot be enforced: it is skipped with that
    reason, never silently.
    """
    promoted: list[str] = []
    skipped: list[tuple[str, str]] = []
    for snippet in snippets:
        with transaction.atomic():
            row = Snippet.objects.select_for_update().get(pk=snippet.pk)
            if row.enforcement == Enforcement.ENFORCE:
                skipped.append((row.identifier, "already enforced"))
                continue
            if not row.data_class or not row.ceiling:
                skipped.append((row.identifier, "declare a data class and a ceiling first"))
                continue
            row.enforcement = Enforcement.ENFORCE
            snippet_save(snippet=row, actor=actor, reason="promoted to enforce")
            promoted.append(row.identifier)
            logger.info("snippet %s promoted to enforce by %s", row.identifier, actor)
    return PromotionResult(promoted=tuple(promoted), skipped=tuple(skipped))


def snippet_update(
    *, snippet: Snippet, actor: Any = None, tag_names: Sequence[str] | None = None, **fields: Any
) -> Snippet:
    """Change ``fields`` (and the tags, when given) and save a new history version.

    Raises ``ValidationError`` before anything is stored. Enforcement may be promoted to ``enforce``
    here, never relaxed to ``observe``: observe exists for rows that predate classification.
    """
    if fields.get("enforcement", Enforcement.ENFORCE) != Enforcement.ENFORCE:
        raise ValidationError(
            {"enforcement": "A snippet can be promoted to enforce, never relaxed to observe."}
        )
    for name, value in fields.items():
        setattr(snippet, name, value)
    return snippet_save(snippet=snippet, tag_names=tag_names, actor=actor, reason="updated")


@transaction.atomic
def snippet_delete(*, snippet: Snippet, actor: Any = None) -> None:
    """Delete ``snippet``; its history keeps a deletion version naming ``actor``. Configurations select
    snippets by tag, so no configuration row refers to it."""
    snippet._history_user = actor  # type: ignore[attr-defined]
    snippet._change_reason = "deleted"  # type: ignore[attr-defined]
    snippet.delete()
    logger.info("snippet %s deleted by %s", snippet.identifier, actor)
