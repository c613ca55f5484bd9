"""Writes for skill sources and skills: sync, enable/disable, classification. Every change is audited."""

from __future__ import annotations

import logging

import httpx
from django.db import transaction
from django.utils import timezone

from config.errors import ApplicationError
from governance.actors import SYSTEM, Actor, history_stamp
from governance.guardrails.injection import InjectionSeverity
from governance.services import reclassification_guard
from skills.audit import audit_record
from skills.errors import (
    SkillFingerprintMismatch,
    SkillSourceAdminOnly,
    SkillSourceInvalid,
    SkillStateConflict,
    SkillSyncInProgress,
)
from skills.ingest.fetch import fetch_snapshot
from skills.ingest.github import source_location
from skills.ingest.snapshot import SyncLimits
from skills.ingest.sync import SyncResult, apply_snapshot, check_fingerprint, parse_snapshot
from skills.locks import SyncClaim, source_sync_lock
from skills.models import Skill, SkillAuditEvent, SkillSource, SkillSourceKind, SkillTrustLevel, SyncStatus
from skills.queue import sync_enqueue

logger = logging.getLogger(__name__)
DEFAULT_LIMITS = SyncLimits()


def skill_source_create(
    *,
    name: str,
    kind: str,
    default_data_class: str,
    default_ceiling: str,
    url: str = "",
    path: str = "",
    ref: str = "",
    token_env: str = "",
    trust_level: str = SkillTrustLevel.UNTRUSTED,
    expected_fingerprint: str = "",
    server_paths_allowed: bool = True,
) -> SkillSource:
    """Validate and store a new source. Raises ``ValidationError`` before anything is stored.

    With ``server_paths_allowed=False`` (the API's way in: GitHub kinds only) a local folder or an
    uploaded archive, whose paths are on the server, raises :class:`SkillSourceAdminOnly`. A GitHub
    source is refused here, not first at its sync, when its URL could never be fetched: a host off the
    allow-list, another scheme or port, credentials in it (:class:`GitHubUrlRefused`, ``extra.host``
    naming the host), or not a repository URL (:class:`SkillSourceInvalid`); ``extra.field`` is
    ``url``. No connection is made."""
    if not server_paths_allowed and kind in SkillSourceKind.values and not SkillSourceKind(kind).is_github:
        raise SkillSourceAdminOnly(
            f"A {kind} source reads server paths; only an admin may add one.", extra={"kind": kind}
        )
    source = SkillSource(
        name=name,
        kind=kind,
        url=url,
        path=path,
        ref=ref,
        token_env=token_env,
        trust_level=trust_level,
        default_data_class=default_data_class,
        default_ceiling=default_ceiling,
        expected_fingerprint=expected_fingerprint,
    )
    source.full_clean()
    skill_source_check_fetchable(source)
    source.save()
    return source


def skill_source_check_fetchable(source: SkillSource) -> None:
    """For a GitHub source, raise what a sync of it would raise for its URL and path, naming the field
    ``url``; the API's creation and the admin's form both refuse with it. No connection is made."""
    if source.kind not in SkillSourceKind.values or not SkillSourceKind(source.kind).is_github:
        return
    try:
        source_location(source)
    except ApplicationError as refused:
        refused.extra = {"field": "url", **refused.extra}
        raise


def skill_source_sync(
    *,
    source_id: int,
    actor: Actor = SYSTEM,
    transport: httpx.BaseTransport | None = None,
    limits: SyncLimits = DEFAULT_LIMITS,
) -> SyncResult:
    """Fetch the source, parse every SKILL.md and apply the result in one transaction.

    Raises :class:`SkillSyncInProgress` (nothing touched) when another sync holds the source's lock.
    Any other typed error (fetch refused, archive rejected, fingerprint mismatch) leaves every skill as it
    was, records status ``error`` with the message on the source, and is re-raised. ``transport`` is for
    tests only (see ``skills.ingest.github_http``).
    """
    if not SkillSource.objects.filter(pk=source_id).exists():
        raise SkillSourceInvalid(f"There is no skill source {source_id}.")
    with source_sync_lock(source_id) as claim:
        source = SkillSource.objects.get(pk=source_id)
        try:
            snapshot = fetch_snapshot(source, limits=limits, transport=transport)
            ingested, failures = parse_snapshot(snapshot)
            fingerprint = check_fingerprint(source, ingested)
            with transaction.atomic():
                locked = SkillSource.objects.select_for_update().get(pk=source_id)
                if not claim.held():
                    raise SkillSyncInProgress(
                        "The sync lock was lost (taken over as stale); nothing was applied."
                    )
                tally = apply_snapshot(source=locked, snapshot=snapshot, ingested=ingested, actor=actor)
                result = SyncResult(
                    source_id=source_id,
                    status=SyncStatus.PARTIAL if failures or snapshot.partial_reason else SyncStatus.OK,
                    source_sha=snapshot.source_sha,
                    fingerprint=fingerprint,
                    created=tuple(tally.created),
                    enabled_on_create=tuple(tally.enabled_on_create),
                    updated=tuple(tally.updated),
                    unchanged=tuple(tally.unchanged),
                    disabled=tuple(tally.disabled),
                    orphaned=tuple(tally.orphaned),
                    flagged=tuple(tally.flagged),
                    failed=failures,
                    partial_reason=snapshot.partial_reason,
                )
                _record_finished(locked, result)
        except SkillFingerprintMismatch as exc:
            _record_error(source, claim, exc, actor=actor, event=SkillAuditEvent.FINGERPRINT_REJECTED)
            raise
        except SkillSyncInProgress:
            raise
        except ApplicationError as exc:
            _record_error(source, claim, exc, actor=actor)
            raise
    logger.info("skill source %s synced: %s", source_id, result.status)
    return result


def _record_finished(source: SkillSource, result: SyncResult) -> None:
    source.sync_status = result.status
    source.last_synced_at = timezone.now()
    source.sync_lock_token = ""
    if SkillSourceKind(source.kind).is_github:
        source.pinned_sha = result.source_sha
    problems = [result.partial_reason] if result.partial_reason else []
    problems += [f"{len(result.failed)} file(s) failed"] if result.failed else []
    source.last_error = "; ".join(problems)
    source.last_fingerprint = result.fingerprint
    source.last_counts = {
        "created": len(result.created),
        "updated": len(result.updated),
        "unchanged": len(result.unchanged),
        "disabled": len(result.disabled),
        "orphaned": len(result.orphaned),
        "flagged": len(result.flagged),
        "failed": len(result.failed),
    }
    source.save(
        update_fields=[
            "sync_status", "last_synced_at", "sync_lock_token", "pinned_sha", "last_error",
            "last_fingerprint", "last_counts",
        ]
    )  # fmt: skip


def _record_error(
    source: SkillSource,
    claim: SyncClaim,
    exc: ApplicationError,
    *,
    actor: Actor,
    event: SkillAuditEvent | None = None,
) -> None:
    with transaction.atomic():
        SkillSource.objects.filter(pk=source.pk, sync_lock_token=claim.token).update(
            sync_status=SyncStatus.ERROR, sync_lock_token="", last_error=f"{exc.code}: {exc.message}"[:2000]
        )
        if event is not None:
            actual = str(exc.extra.get("actual", ""))
            audit_record(event=event, actor=actor, source=source, detail=f"{exc.code}; got {actual}")
    logger.warning("skill source %s sync failed: %s", source.pk, exc.code)


def skill_source_request_sync(*, source_id: int) -> None:
    """Enqueue a sync once the current transaction commits (eager without a broker)."""
    sync_enqueue(source_id=source_id)


# --- editor actions ---------------------------------------------------------------------------------


def _save(skill: Skill, actor: Actor, reason: str) -> Skill:
    skill.full_clean()
    history_stamp(skill, actor=actor, reason=reason)
    skill.save()
    return skill


@transaction.atomic
def skill_enable(*, skill: Skill, actor: Actor, acknowledge_findings: bool = False) -> Skill:
    """Enable a skill. Refuses an orphaned skill, and one with high-severity findings unless they are
    acknowledged (now or before). Enabling an enabled skill changes nothing and records nothing."""
    row = Skill.objects.select_for_update().select_related("source").get(pk=skill.pk)
    if row.is_orphaned:
        raise SkillStateConflict(f"Skill {row.identifier} is gone upstream (orphaned) and cannot be enabled.")
    high = row.injection_severity == InjectionSeverity.HIGH
    if high and not (row.findings_acknowledged or acknowledge_findings):
        raise SkillStateConflict(
            f"Skill {row.identifier} has high-severity injection findings; review and acknowledge them first."
        )
    if row.is_enabled and (row.findings_acknowledged or not acknowledge_findings):
        return row
    row.is_enabled = True
    row.findings_acknowledged = row.findings_acknowledged or acknowledge_findings
    _save(row, actor, "enabled")
    detail = "findings acknowledged" if acknowledge_findings and row.injection_severity else ""
    audit_record(event=SkillAuditEvent.ENABLED, actor=actor, skill=row, detail=detail)
    return row


@transaction.atomic
def skill_disable(*, skill: Skill, actor: Actor) -> Skill:
    """Disable a skill; disabling a disabled skill changes nothing and records nothing."""
    row = Skill.objects.select_for_update().select_related("source").get(pk=skill.pk)
    if not row.is_enabled:
        return row
    row.is_enabled = False
    _save(row, actor, "disabled")
    audit_record(event=SkillAuditEvent.DISABLED, actor=actor, skill=row)
    return row


@transaction.atomic
def skill_classify(*, skill: Skill, data_class: str, ceiling: str, enforcement: str, actor: Actor) -> Skill:
    """Set a skill's classification (editors own it; syncs never change it). Validated before saving;
    loosening it needs an actor who may declassify (``ReclassifyForbidden``), and every change is a
    ``reclassified`` event."""
    row = Skill.objects.select_for_update().get(pk=skill.pk)
    row.data_class, row.ceiling, row.enforcement = data_class, ceiling, enforcement
    with reclassification_guard(row=row, actor=actor):
        _save(row, actor, "classification edited")
    return row
