"""Skill sources, the skills ingested from them, and the append-only skill audit (docs/architecture.md).

Models hold data and invariants only: fetching, parsing and upserting live in ``skills.ingest`` and
``skills.services``.
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.db import models
from simple_history.models import HistoricalRecords

from governance.classification import validate_classification
from governance.classified import ClassifiedModel
from governance.models import AppendOnlyModel
from governance.vocabulary import DataClass, Enforcement, Integrity, RankedChoices, SourceKind, TrustZone
from skills.parsing import WARNING_FRONT_MATTER_LENIENT
from skills.tokens import validate_token_env

_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,127}")
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


class SkillTrustLevel(RankedChoices):
    """Publisher provenance; declaration order is the rank (0 least trusted)."""

    UNTRUSTED = "untrusted", "Untrusted"
    COMMUNITY = "community", "Community"
    VERIFIED = "verified", "Verified"
    FIRST_PARTY = "first_party", "First party"

    def satisfies(self, floor: SkillTrustLevel) -> bool:
        return self.rank >= floor.rank

    @classmethod
    def parse(cls, raw: object) -> SkillTrustLevel:
        """A stored or requested level; unknown means ``untrusted`` (the lowest: never an upgrade)."""
        if isinstance(raw, str) and raw in cls.values:
            return cls(raw)
        return cls.UNTRUSTED


class SkillSourceKind(models.TextChoices):
    GITHUB_FILE = "github_file", "GitHub: single SKILL.md"
    GITHUB_REPO = "github_repo", "GitHub: repository"
    GITHUB_MARKETPLACE = "github_marketplace", "GitHub: Claude plugin marketplace"
    LOCAL_FOLDER = "local_folder", "Local folder"
    UPLOADED_ARCHIVE = "uploaded_archive", "Uploaded zip archive"

    @property
    def is_github(self) -> bool:
        return self.value.startswith("github_")


class SyncStatus(models.TextChoices):
    NEVER_SYNCED = "never_synced", "Never synced"
    SYNCING = "syncing", "Syncing"
    OK = "ok", "OK"
    PARTIAL = "partial", "Partial"
    ERROR = "error", "Error"


class SkillAuditEvent(models.TextChoices):
    INGEST_CREATED = "ingest_created", "Created by ingest"
    INGEST_UPDATED = "ingest_updated", "Updated by ingest"
    INGEST_DISABLED_ON_CHANGE = "ingest_disabled_on_change", "Disabled: changed upstream"
    ORPHANED = "orphaned", "Orphaned: gone upstream"
    ENABLED = "enabled", "Enabled"
    DISABLED = "disabled", "Disabled"
    FINGERPRINT_REJECTED = "fingerprint_rejected", "Ingest rejected: fingerprint mismatch"
    INJECTION_BLOCKED = "injection_blocked", "Disabled: high-severity injection finding"


class SkillSource(models.Model):
    """Where skills come from. GitHub kinds use ``url`` (+ ``ref``, and ``path`` for a single file or a
    sub-folder); local kinds use ``path``. The token is read from the env var named by ``token_env``
    at sync time and is never stored."""

    name = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=32, choices=SkillSourceKind.choices)
    url = models.URLField(max_length=500, blank=True, help_text="GitHub repository URL.")
    path = models.CharField(
        max_length=1000,
        blank=True,
        help_text="Local folder or zip file; for GitHub, the file (single file) or sub-folder in the repository.",
    )
    ref = models.CharField(max_length=200, blank=True, help_text="Branch, tag or commit; empty means HEAD.")
    token_env = models.CharField(
        max_length=128, blank=True, help_text="Name of the environment variable holding a GitHub token."
    )
    trust_level = models.CharField(
        max_length=16, choices=SkillTrustLevel.choices, default=SkillTrustLevel.UNTRUSTED
    )
    default_data_class = models.CharField(
        max_length=32, choices=DataClass.choices, help_text="Given to each new skill of this source."
    )
    default_ceiling = models.CharField(
        max_length=32, choices=TrustZone.choices, help_text="Given to each new skill of this source."
    )
    expected_fingerprint = models.CharField(
        max_length=64,
        blank=True,
        help_text='sha256 hex over the sorted "path:checksum" lines of every skill; a mismatch blocks the ingest.',
    )
    pinned_sha = models.CharField(max_length=64, blank=True, editable=False)
    sync_status = models.CharField(
        max_length=16, choices=SyncStatus.choices, default=SyncStatus.NEVER_SYNCED, editable=False
    )
    sync_started_at = models.DateTimeField(null=True, blank=True, editable=False)
    sync_lock_token = models.CharField(max_length=36, blank=True, editable=False)
    last_synced_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_error = models.TextField(blank=True, editable=False)
    last_fingerprint = models.CharField(max_length=64, blank=True, editable=False)
    last_counts = models.JSONField(default=dict, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors: dict[str, str] = {}
        kind = SkillSourceKind(self.kind) if self.kind in SkillSourceKind.values else None
        if kind is not None and kind.is_github and not self.url:
            errors["url"] = "A GitHub source needs the repository URL."
        if kind is not None and not kind.is_github and not self.path:
            errors["path"] = "A local source needs a folder or zip path."
        if kind == SkillSourceKind.GITHUB_FILE and not self.path:
            errors["path"] = "A single-file source needs the path of its SKILL.md in the repository."
        if self.token_env and not _ENV_NAME.fullmatch(self.token_env):
            errors["token_env"] = "Name an environment variable (A-Z, 0-9, _), not the token itself."
        if self.expected_fingerprint and not _SHA256_HEX.fullmatch(self.expected_fingerprint):
            errors["expected_fingerprint"] = "A fingerprint is 64 lower-case hex characters (sha256)."
        if errors:
            raise ValidationError(errors)
        validate_token_env(self.token_env)
        validate_classification(
            data_class=self.default_data_class,
            ceiling=self.default_ceiling,
            enforcement=Enforcement.ENFORCE,
            field_prefix="default_",
        )


class Skill(ClassifiedModel):
    """One SKILL.md of a source, upserted by ``(source, path)``. Sync-managed fields mirror the parsed file;
    editors own ``is_enabled`` (through services) and the classification (``data_class``, ``ceiling``,
    ``enforcement``), which later syncs never change. ``content`` is the whole normalised file: the
    composer re-derives the checksum from it."""

    source_kind = SourceKind.SKILL
    screened_fields = ("description", "body")

    source = models.ForeignKey(SkillSource, on_delete=models.PROTECT, related_name="skills")
    path = models.CharField(max_length=1000)
    name = models.CharField(max_length=64)
    description = models.TextField()
    body = models.TextField(blank=True)
    content = models.TextField()
    license = models.TextField(blank=True)
    compatibility = models.CharField(max_length=500, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    allowed_tools = models.JSONField(default=list, blank=True)
    declares_allowed_tools = models.BooleanField(default=False)
    unknown_keys = models.JSONField(default=dict, blank=True, help_text="Front-matter keys outside the spec.")
    parse_warnings = models.JSONField(default=list, blank=True)
    checksum = models.CharField(max_length=64)
    source_sha = models.CharField(max_length=64, blank=True)
    trust_level = models.CharField(
        max_length=16, choices=SkillTrustLevel.choices, default=SkillTrustLevel.UNTRUSTED
    )
    is_enabled = models.BooleanField(default=False)
    is_orphaned = models.BooleanField(default=False)
    injection_findings = models.JSONField(default=list, blank=True)
    injection_severity = models.CharField(max_length=8, blank=True)
    findings_acknowledged = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    history = HistoricalRecords()

    class Meta(ClassifiedModel.Meta):
        ordering = ["source__name", "path"]
        constraints = [
            models.UniqueConstraint(fields=["source", "path"], name="skill_unique_source_path"),
            *ClassifiedModel.Meta.constraints,
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.identifier})"

    @property
    def identifier(self) -> str:
        """Stable across syncs and unique: the upsert key, without a join."""
        return f"{self.source_id}:{self.path}"

    @property
    def source_integrity(self) -> str:
        """A skill from a reviewed source (``verified`` or ``first_party``) is trusted; any other is
        untrusted: its text came from outside and nobody vouched for it."""
        reviewed = SkillTrustLevel.parse(self.trust_level).satisfies(SkillTrustLevel.VERIFIED)
        return Integrity.TRUSTED if reviewed else Integrity.UNTRUSTED

    @property
    def lenient_warnings(self) -> list[str]:
        """The parse warnings of front matter read leniently (skills/front_matter.py); each awaits review."""
        return [w for w in self.parse_warnings if str(w).startswith(WARNING_FRONT_MATTER_LENIENT)]

    def clean(self) -> None:
        for field in ("metadata", "unknown_keys"):
            if not isinstance(getattr(self, field), dict):
                raise ValidationError({field: "Must be a JSON object."})
        if not isinstance(self.allowed_tools, list):
            raise ValidationError({"allowed_tools": "Must be a JSON list."})
        super().clean()


class SkillAudit(AppendOnlyModel):
    """What happened to skills and sources, by whom. Never content.

    Skills and sources are named by plain identifiers, not foreign keys: a delete cascading into this
    table (or SET_NULL rewriting it) would change history, which append-only rows refuse.
    """

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    event = models.CharField(max_length=32, choices=SkillAuditEvent.choices)
    skill_pk = models.BigIntegerField(null=True, blank=True, db_index=True)
    skill_identifier = models.CharField(max_length=1100, blank=True)
    source_pk = models.BigIntegerField(null=True, blank=True, db_index=True)
    source_name = models.CharField(max_length=100, blank=True)
    actor = models.CharField(max_length=150)
    detail = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.event} {self.skill_identifier or self.source_name} by {self.actor}"
