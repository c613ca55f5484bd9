"""Drafts and publishing: an editor's save proposes, a publish changes the live row.

A draft holds the proposed field values of one live row (:class:`governance.models.Draft`). Runs,
completions and previews read live rows only; runs pin the history versions of live rows, which
change only when a draft is published. The one send that carries drafts is an evaluation's drafted
side, under the governed send and never under a looser class than live
(docs/decisions/0025-evaluating-drafts.md, :func:`classification_held`). Each publish is recorded
(:class:`governance.models.Publication`) and, where the model keeps history, as a history version
naming the publisher.

Safety never waits: when a draft's classification is stricter than the live row's (a higher class,
a tighter ceiling, observe → enforce), :func:`classification_tightened` says what the live row takes at
once; a looser classification is published like any other change, under the reclassification rules
(:func:`governance.services.reclassification_guard`).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db import models
from django.db.models import Exists, OuterRef, QuerySet
from django.db.models.functions import Cast

from governance.actors import Actor
from governance.classification import validate_classification
from governance.classified import FIELDS, Classification
from governance.models import Draft, Publication

logger = logging.getLogger(__name__)


def _key(row: models.Model) -> dict[str, Any]:
    return {"content_type": ContentType.objects.get_for_model(type(row)), "object_id": str(row.pk)}


def draft_get(row: models.Model) -> Draft | None:
    """The pending draft of ``row``, if any."""
    return Draft.objects.filter(**_key(row)).select_related("author").first()


def with_has_draft(rows: QuerySet[Any]) -> QuerySet[Any]:
    """``rows`` annotated with ``has_draft`` (one subquery, not a query per row)."""
    pending = Draft.objects.filter(
        content_type=ContentType.objects.get_for_model(rows.model),
        object_id=Cast(OuterRef("pk"), output_field=models.CharField()),
    )
    return rows.annotate(has_draft=Exists(pending))


def drafts_by(*, model: type[models.Model], author_id: int) -> QuerySet[Draft]:
    """The drafts of ``model``'s rows whose author is the user ``author_id`` ("my drafts")."""
    return Draft.objects.filter(content_type=ContentType.objects.get_for_model(model), author_id=author_id)


def drafts_of(model: type[models.Model]) -> QuerySet[Draft]:
    """The pending drafts of ``model``'s rows, whoever wrote them."""
    return Draft.objects.filter(content_type=ContentType.objects.get_for_model(model))


def draft_digest(draft: Draft) -> str:
    """A digest of ``draft``'s values: a draft saved again with other values has another digest."""
    raw = json.dumps(draft.values, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()


def draft_kind(row: models.Model) -> str:
    """How a row's kind is named beside its drafts: ``<app label>.<model name>``."""
    return row._meta.label_lower


def draft_values_apply(row: models.Model, values: dict[str, Any]) -> None:
    """Set a draft's values of ``row``'s own fields on ``row`` (unsaved; many-to-many fields and form
    fields that are no model field are left to the caller)."""
    for name, value in values.items():
        try:
            field = type(row)._meta.get_field(name)
        except FieldDoesNotExist:
            continue
        if field.concrete and not field.many_to_many:
            setattr(row, field.attname, value)


def draft_save(*, row: models.Model, values: dict[str, Any], actor: Actor) -> Draft:
    """Store ``values`` as the draft of ``row`` (replacing an earlier draft); the live row is untouched."""
    draft, _ = Draft.objects.update_or_create(
        **_key(row),
        defaults={
            "values": values,
            "author_id": actor.user.pk if actor.user is not None else None,
            "author_label": actor.label,
        },
    )
    return draft


def draft_discard(row: models.Model) -> bool:
    """Delete the draft of ``row``; whether there was one."""
    deleted, _ = Draft.objects.filter(**_key(row)).delete()
    return bool(deleted)


def publication_record(
    *, row: models.Model, actor: Actor, fields: Iterable[str], version: int | None = None
) -> Publication:
    """Record that ``actor`` published ``fields`` of ``row`` now, as history version ``version`` (None
    for a model without history), and drop its draft. Call it inside the transaction that changed
    the live row."""
    draft_discard(row)
    return Publication.objects.create(
        **_key(row),
        object_repr=str(row)[:200],
        author_label=actor.label,
        fields=sorted(fields),
        version=version,
    )


def latest_version(row: models.Model) -> int | None:
    """The history id of ``row``'s newest history version; None for a model without history."""
    history = getattr(type(row), "history", None)
    if history is None:
        return None
    versions = history.filter(id=row.pk).order_by("-history_id").values_list("history_id", flat=True)
    return versions.first()


def classification_tightened(live: Classification, proposed: Classification) -> Classification | None:
    """What the live row takes at once from ``proposed``: all of it when it loosens nothing; otherwise
    each field whose change loosens nothing and leaves a valid classification (a loosening field stays
    in the draft). ``None`` when nothing tightens."""
    if proposed != live and not live.loosened_by(proposed) and _valid(proposed):
        return proposed
    current = live
    for _ in FIELDS:  # a field may become applicable once another one has moved
        before = current
        for name in FIELDS:
            value = getattr(proposed, name)
            if value == getattr(current, name):
                continue
            candidate = Classification(**{**current.__dict__, name: value})
            if not current.loosened_by(candidate) and _valid(candidate):
                current = candidate
        if current == before:
            break
    return None if current == live else current


def classification_held(live: Classification, proposed: Classification) -> Classification:
    """``proposed`` with every field that would loosen ``live`` kept at its live value: what a draft's
    content is sent under before the draft is published (a loosening needs the publish, and its
    reclassification rules, first)."""
    loosened = live.loosened_by(proposed)
    return Classification(**{name: getattr(live if name in loosened else proposed, name) for name in FIELDS})


def _valid(classification: Classification) -> bool:
    try:
        validate_classification(
            data_class=classification.data_class,
            ceiling=classification.ceiling,
            enforcement=classification.enforcement,
        )
    except ValidationError:
        return False
    return True


# --- checks before publishing ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PublishCheck:
    """What an app has to say about publishing a draft, for the publish page: a line of text, an
    optional link, and whether it keeps the draft from being published."""

    label: str
    url: str = ""
    link_text: str = "Open"
    blocking: bool = False


PublishChecker = Callable[[models.Model, Draft], list[PublishCheck]]
# Registered by apps above governance in their ``ready()``; governance itself imports none of them.
_CHECKERS: list[PublishChecker] = []


def publish_checker_register(checker: PublishChecker) -> None:
    """Have ``checker`` asked before every publish (once, however often it is registered)."""
    if checker not in _CHECKERS:
        _CHECKERS.append(checker)


def publish_checks(row: models.Model, draft: Draft) -> list[PublishCheck]:
    """What every registered checker says about publishing ``draft`` of ``row``. A checker that raises
    blocks the publish (fail closed) and is logged."""
    checks: list[PublishCheck] = []
    for checker in _CHECKERS:
        try:
            checks.extend(checker(row, draft))
        except Exception:
            logger.exception("publish check %s failed for %s", getattr(checker, "__name__", checker), row)
            checks.append(PublishCheck("A check before publishing failed; see the log.", blocking=True))
    return checks
