"""Tagged prompt snippets curated by editors. Every snippet is classified (``governance.classified``)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models
from simple_history.models import HistoricalRecords

from governance.classified import ClassifiedModel
from governance.vocabulary import SourceKind

MAX_SNIPPET_CHARS = 50_000


def normalise_tag(raw: str) -> str:
    """Tags match exactly after trimming and lower-casing; inner whitespace collapses to one hyphen."""
    return "-".join(raw.strip().lower().split())


class Tag(models.Model):
    name = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        self.name = normalise_tag(self.name)
        if not self.name:
            raise ValidationError({"name": "A tag needs at least one visible character."})


class Snippet(ClassifiedModel):
    source_kind = SourceKind.SNIPPET
    screened_fields = ("name", "description", "text")

    identifier = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    description = models.CharField(max_length=500, blank=True)
    text = models.TextField()
    tags = models.ManyToManyField(Tag, related_name="snippets", blank=True)
    is_active = models.BooleanField(default=True)
    sorting = models.IntegerField(default=0, help_text="Lower comes first within a tag.")
    metadata = models.JSONField(default=dict, blank=True)
    # Findings of the prompt-injection scanner, refreshed on every save: [{rule, severity, start, end}].
    injection_findings = models.JSONField(default=list, blank=True, editable=False)
    injection_severity = models.CharField(max_length=8, blank=True, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    history = HistoricalRecords(m2m_fields=[tags])

    class Meta(ClassifiedModel.Meta):
        ordering = ["sorting", "name"]
        # Saving in admin stores a draft (governance.drafts); publishing it changes the live row.
        permissions = [("publish_snippet", "Can publish a snippet's draft")]

    def __str__(self) -> str:
        return self.identifier

    def clean(self) -> None:
        if not isinstance(self.metadata, dict):
            raise ValidationError({"metadata": "Metadata must be a JSON object."})
        if len(self.text) > MAX_SNIPPET_CHARS:
            raise ValidationError({"text": f"A snippet holds at most {MAX_SNIPPET_CHARS} characters."})
        super().clean()
