"""How the skill commands sync a source and print the result: one line per event, so operators can grep
them."""

from __future__ import annotations

from django.core.management.base import CommandError

from config.errors import ApplicationError
from governance.actors import Actor
from skills.ingest.sync import SyncResult
from skills.models import SkillSource
from skills.services import skill_source_sync


def sync_and_report(source: SkillSource, *, command: str) -> list[str]:
    """Sync ``source`` now as the system actor ``command:<command>`` and return the report's lines. A
    refused or failed sync is a :class:`CommandError` carrying the error's code and message."""
    try:
        result = skill_source_sync(source_id=source.pk, actor=Actor.system(f"command:{command}"))
    except ApplicationError as exc:
        raise CommandError(f"{exc.code}: {exc.message}") from None
    return sync_report(source, result)


def sync_report(source: SkillSource, result: SyncResult) -> list[str]:
    """Lines naming every created, flagged, disabled, orphaned and failed file, then a summary."""
    lines = [f"Source {source.name!r} (#{source.pk}, {source.kind}): status {result.status}"]
    lines += [f"commit: {result.source_sha}"] if result.source_sha else []
    lines.append(f"fingerprint: {result.fingerprint}")
    enabled = set(result.enabled_on_create)
    lines += [f"created: {path} ({'enabled' if path in enabled else 'disabled'})" for path in result.created]
    lines += [f"updated: {path}" for path in result.updated]
    lines += [
        f"flagged: {flag.path}: {flag.severity} ({', '.join(flag.rules)})"
        + (" -> disabled" if flag.severity == "high" else "")
        for flag in result.flagged
    ]
    lines += [f"disabled: {path}: {reason}" for path, reason in result.disabled]
    lines += [f"orphaned: {path}" for path in result.orphaned]
    lines += [f"failed: {failure.path}: {failure.rule} - {failure.message}" for failure in result.failed]
    lines += [f"partial: {result.partial_reason}"] if result.partial_reason else []
    lines.append(
        f"summary: {len(result.created)} created, {len(result.updated)} updated, {len(result.unchanged)} unchanged, "
        f"{len(result.disabled)} disabled, {len(result.orphaned)} orphaned, {len(result.flagged)} flagged, "
        f"{len(result.failed)} failed"
    )
    return lines
