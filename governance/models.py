"""The append-only governance event log (never content, only classifications and names), and drafts
with their publications (a draft holds proposed content; a publication names fields only)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from governance.errors import AppendOnlyViolation
from governance.vocabulary import Decision, EventOutcome, SourceKind


class AppendOnlyQuerySet(models.QuerySet):
    """Bulk writes that would change history are refused before reaching the database."""

    def update(self, **kwargs: Any) -> int:
        raise AppendOnlyViolation(f"{self.model.__name__} rows are append-only: update refused.")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyViolation(f"{self.model.__name__} rows are append-only: delete refused.")

    def bulk_update(self, objs: Any, fields: Any, batch_size: int | None = None) -> int:
        raise AppendOnlyViolation(f"{self.model.__name__} rows are append-only: update refused.")


class AppendOnlyModel(models.Model):
    """Rows are created once; ``save`` of an existing row and ``delete`` raise.

    On PostgreSQL a trigger (installed by migration) also rejects UPDATE and DELETE issued in SQL.
    """

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyViolation(f"{type(self).__name__} rows are append-only: update refused.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyViolation(f"{type(self).__name__} rows are append-only: delete refused.")


class GovernanceEvent(AppendOnlyModel):
    """One governance decision, appended to a hash chain (``governance/chain``): written only by
    ``governance.services``, which sets the chain fields; the time is set before the digest."""

    created_at = models.DateTimeField(
        default=timezone.now, editable=False, db_index=True, verbose_name="recorded at"
    )
    correlation_id = models.CharField(max_length=64, db_index=True, verbose_name="correlation ID")
    decision = models.CharField(max_length=32, choices=Decision.choices)
    outcome = models.CharField(max_length=16, choices=EventOutcome.choices)
    source_kind = models.CharField(max_length=32, choices=SourceKind.choices, blank=True)
    source_identifier = models.CharField(max_length=200, blank=True)
    data_class = models.CharField(max_length=32, blank=True)
    ceiling = models.CharField(max_length=32, blank=True)
    zone = models.CharField(max_length=32, blank=True)
    reason = models.CharField(max_length=300, blank=True)
    # Names, not foreign keys: the policy core imports no other app, and history must outlive rows.
    provider = models.CharField(max_length=100, blank=True)
    model = models.CharField(max_length=200, blank=True)
    configuration = models.CharField(max_length=100, blank=True)
    api_client = models.CharField(max_length=100, blank=True, verbose_name="API client")
    run = models.CharField(max_length=64, blank=True, db_index=True)
    step = models.PositiveIntegerField(null=True, blank=True)
    # The hash chain: which chain, the position in it (from 1), the digest of the event before it
    # (``GENESIS`` for the first) and this event's digest over its canonical content.
    chain = models.PositiveSmallIntegerField(editable=False)
    seq = models.PositiveBigIntegerField(editable=False, verbose_name="position in the chain")
    prev_hash = models.CharField(max_length=64, editable=False, verbose_name="digest of the event before")
    hash = models.CharField(max_length=64, editable=False, verbose_name="digest")
    # The id of the key that signed the digest (governance.chain.keys); empty on events written
    # before keys had ids, which verify under any configured key. Not part of the digest.
    # The database's default too, so that a process of a release before key ids, still serving while
    # the release step migrates, writes rows without an id (they verify under any configured key).
    key_id = models.CharField(max_length=16, blank=True, editable=False, default="", db_default="")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["decision", "outcome"])]
        constraints = [models.UniqueConstraint(fields=["chain", "seq"], name="governanceevent_chain_seq")]
        # Declassifying (a lower class, a looser ceiling, enforce relaxed to observe) is privileged;
        # the editors group does not hold it.
        permissions = [("reclassify", "Can lower a data class, loosen a ceiling or relax enforcement")]

    def __str__(self) -> str:
        """How the event reads as a title: ``Context blocked (enforced): snippet incident-runbook``."""
        decision = Decision(self.decision).label if self.decision in Decision.values else self.decision
        outcome = EventOutcome(self.outcome).label if self.outcome in EventOutcome.values else self.outcome
        title = f"{decision} ({str(outcome).lower()})"
        if self.source_kind in SourceKind.values:
            title += f": {str(SourceKind(self.source_kind).label).lower()} {self.source_identifier}"
        elif self.source_identifier:
            title += f": {self.source_identifier}"
        return title.strip()


class GovernanceLogHead(models.Model):
    """The last event of one chain: the row a writer locks (briefly, ``select_for_update``) to append
    to that chain. Not evidence: the verifier recomputes every chain from the events and reports a
    head that disagrees with its chain."""

    chain = models.PositiveSmallIntegerField(primary_key=True)
    seq = models.PositiveBigIntegerField(default=0)
    hash = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"chain {self.chain} at {self.seq}"


class GovernanceAnchorHead(models.Model):
    """The last anchor (one row): the row an anchorer locks to chain the next anchor to it, and what
    pins how many anchors there are. Like a chain's head it is not evidence on its own (whoever can
    delete anchors can wind it back); the copies of the anchors kept outside the database are."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1, editable=False)
    seq = models.PositiveBigIntegerField(default=0)
    hash = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"anchors at {self.seq}"


class GovernanceAnchor(AppendOnlyModel):
    """Every chain's head at one moment (``heads``: ``[[chain, seq, digest], ...]``), chained to the
    anchor before it: a deleted tail of a chain, or a chain rewritten from its start, no longer
    matches the anchors taken since."""

    seq = models.PositiveBigIntegerField(unique=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False, db_index=True)
    heads = models.JSONField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)
    key_id = models.CharField(
        max_length=16, blank=True, editable=False, default="", db_default=""
    )  # as an event's

    class Meta:
        ordering = ["-seq"]

    def __str__(self) -> str:
        return f"anchor {self.seq}"


class Draft(models.Model):
    """The proposed field values of a live row (a snippet, a configuration), not yet published.

    One draft per row: saving in admin replaces it. Nothing that assembles context reads this table;
    runs, completions, the API and tools read the live rows only (see ``governance.drafts``).
    """

    content_type = models.ForeignKey("contenttypes.ContentType", on_delete=models.CASCADE, related_name="+")
    object_id = models.CharField(max_length=64)
    # The admin form's cleaned values, JSON-ready (a foreign key as its primary key).
    values = models.JSONField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    author_label = models.CharField(max_length=150)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["content_type", "object_id"], name="draft_one_per_row")
        ]

    def __str__(self) -> str:
        return f"draft of {self.content_type.model}:{self.object_id} by {self.author_label}"


class Publication(AppendOnlyModel):
    """One publish: which row, who, when, and which fields changed (names only, never content)."""

    content_type = models.ForeignKey("contenttypes.ContentType", on_delete=models.PROTECT, related_name="+")
    object_id = models.CharField(max_length=64)
    object_repr = models.CharField(max_length=200)
    # A name, not a foreign key: the record must outlive users (and append-only rows cannot be nulled).
    author_label = models.CharField(max_length=150)
    published_at = models.DateTimeField(auto_now_add=True, db_index=True)
    fields = models.JSONField(default=list)
    # The history version the publish created (its history id), where the model keeps history.
    version = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-published_at", "-id"]

    def __str__(self) -> str:
        return f"published {self.content_type.model}:{self.object_repr} by {self.author_label}"
