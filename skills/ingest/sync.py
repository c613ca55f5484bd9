"""Parse a fetched snapshot and apply it to a source's skills (docs/architecture.md). Call in one transaction.

Rules applied here:
- upsert by ``(source, path)``; a file that fails the parser is reported and the others go on;
- new skills arrive disabled, except from a single-file GitHub source; each takes the source's declared
  data class and ceiling, which later syncs never change (editors own classification);
- a changed checksum disables an enabled skill; a high-severity injection finding force-disables;
- a skill absent upstream is orphaned and disabled, never deleted (only when the listing is complete);
- the trust level is copied from the source;
- an expected fingerprint that does not match blocks everything, before the first write.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from governance.actors import Actor, history_stamp
from governance.guardrails.injection import InjectionSeverity, max_severity, scan_for_injection
from governance.guardrails.redaction import RedactionFailed
from governance.vocabulary import Enforcement
from skills.audit import audit_record
from skills.errors import SkillFingerprintMismatch, SkillParseError
from skills.ingest.snapshot import FileFailure, Snapshot
from skills.models import Skill, SkillAuditEvent, SkillSource, SkillSourceKind
from skills.parsing import ParsedSkill, parse_skill_md


@dataclass(frozen=True)
class IngestedSkill:
    path: str
    parsed: ParsedSkill
    content: str  # the normalised file the checksum covers
    findings: tuple[dict[str, Any], ...]
    severity: str  # "" when nothing was found


@dataclass(frozen=True)
class FlaggedSkill:
    path: str
    severity: str
    rules: tuple[str, ...]


@dataclass(frozen=True)
class SyncResult:
    """What one sync did. Paths are relative to the source; ``disabled`` excludes orphaned skills."""

    source_id: int
    status: str
    source_sha: str
    fingerprint: str
    created: tuple[str, ...]
    enabled_on_create: tuple[str, ...]
    updated: tuple[str, ...]
    unchanged: tuple[str, ...]
    disabled: tuple[tuple[str, str], ...]  # (path, reason)
    orphaned: tuple[str, ...]
    flagged: tuple[FlaggedSkill, ...]
    failed: tuple[FileFailure, ...]
    partial_reason: str


@dataclass
class _Tally:
    created: list[str] = field(default_factory=list)
    enabled_on_create: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    disabled: list[tuple[str, str]] = field(default_factory=list)
    orphaned: list[str] = field(default_factory=list)
    flagged: list[FlaggedSkill] = field(default_factory=list)


def manifest_fingerprint(entries: Iterable[tuple[str, str]]) -> str:
    """sha256 hex of the sorted ``identifier:checksum`` lines joined by newlines (identifier = path)."""
    return hashlib.sha256(
        "\n".join(sorted(f"{path}:{checksum}" for path, checksum in entries)).encode()
    ).hexdigest()


def normalised_text(raw: bytes) -> str:
    """The text the parser's checksum covers: BOM stripped, UTF-8, CRLF and CR as LF."""
    return raw.removeprefix(b"\xef\xbb\xbf").decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def parse_snapshot(snapshot: Snapshot) -> tuple[tuple[IngestedSkill, ...], tuple[FileFailure, ...]]:
    """Parse and scan every fetched file. Pure (no database). Failures keep the parser's rule."""
    ingested: list[IngestedSkill] = []
    failures = list(snapshot.failures)
    for fetched in snapshot.files:
        try:
            parsed = parse_skill_md(fetched.raw, path=fetched.path, folder_name=fetched.folder_name)
            content = normalised_text(fetched.raw)
            findings = scan_for_injection("\n".join([parsed.name, parsed.description, parsed.body]))
        except SkillParseError as exc:
            failures.append(FileFailure(fetched.path, exc.rule.value, exc.message))
            continue
        except RedactionFailed:
            failures.append(FileFailure(fetched.path, "scan_failed", f"{fetched.path} could not be scanned"))
            continue
        if hashlib.sha256(content.encode()).hexdigest() != parsed.checksum:
            failures.append(FileFailure(fetched.path, "checksum_unverifiable", "normalisation disagrees"))
            continue
        severity = max_severity(findings)
        stored = tuple(
            {
                "rule": f.rule,
                "severity": f.severity.value,
                "start": f.start,
                "end": f.end,
                "excerpt": f.excerpt,
            }
            for f in findings
        )
        ingested.append(
            IngestedSkill(fetched.path, parsed, content, stored, severity.value if severity else "")
        )
    return tuple(ingested), tuple(failures)


def check_fingerprint(source: SkillSource, ingested: tuple[IngestedSkill, ...]) -> str:
    """The fingerprint of what was ingested; raises :class:`SkillFingerprintMismatch` when the source
    expects another one (an empty set never matches)."""
    fingerprint = manifest_fingerprint((item.path, item.parsed.checksum) for item in ingested)
    expected = source.expected_fingerprint.strip().lower()
    if expected and not (ingested and hmac.compare_digest(fingerprint, expected)):
        raise SkillFingerprintMismatch(
            f"The ingested skills of source {source.name!r} do not match its expected fingerprint.",
            extra={"expected": expected, "actual": fingerprint, "skills": len(ingested)},
        )
    return fingerprint


def apply_snapshot(
    *, source: SkillSource, snapshot: Snapshot, ingested: tuple[IngestedSkill, ...], actor: Actor
) -> _Tally:
    """Upsert and orphan. The caller holds the transaction and has already checked the fingerprint."""
    tally = _Tally()
    existing = {skill.path: skill for skill in Skill.objects.select_for_update().filter(source=source)}
    for item in ingested:
        skill = existing.get(item.path)
        if skill is None:
            _create(source, item, snapshot.source_sha, actor, tally)
        else:
            _update(source, skill, item, snapshot.source_sha, actor, tally)
    if snapshot.present is not None:
        for path, skill in sorted(existing.items()):
            if path not in snapshot.present and not skill.is_orphaned:
                skill.is_orphaned, skill.is_enabled = True, False
                _save(skill, actor, "ingest: gone upstream")
                audit_record(event=SkillAuditEvent.ORPHANED, actor=actor, skill=skill, detail="gone upstream")
                tally.orphaned.append(path)
    return tally


def _create(source: SkillSource, item: IngestedSkill, sha: str, actor: Actor, tally: _Tally) -> None:
    high = item.severity == InjectionSeverity.HIGH
    skill = Skill(
        source=source,
        path=item.path,
        data_class=source.default_data_class,
        ceiling=source.default_ceiling,
        enforcement=Enforcement.ENFORCE,
        trust_level=source.trust_level,
        is_enabled=source.kind == SkillSourceKind.GITHUB_FILE and not high,
    )
    _copy(skill, item, sha)
    _save(skill, actor, "ingest: created")
    audit_record(
        event=SkillAuditEvent.INGEST_CREATED, actor=actor, skill=skill, detail=f"checksum {skill.checksum}"
    )
    tally.created.append(item.path)
    if skill.is_enabled:
        tally.enabled_on_create.append(item.path)
    _flag(skill, item, actor, tally, blocked=high)


def _update(
    source: SkillSource, skill: Skill, item: IngestedSkill, sha: str, actor: Actor, tally: _Tally
) -> None:
    changed = skill.checksum != item.parsed.checksum
    returned = skill.is_orphaned
    if not (changed or returned or skill.trust_level != source.trust_level):
        tally.unchanged.append(item.path)
        return
    was_enabled = skill.is_enabled
    high = changed and item.severity == InjectionSeverity.HIGH
    if changed:
        _copy(skill, item, sha)
        skill.findings_acknowledged = False
    skill.trust_level, skill.is_orphaned = source.trust_level, False
    if changed and was_enabled:
        skill.is_enabled = False
    _save(skill, actor, "ingest: changed upstream" if changed else "ingest: refreshed")
    if changed and was_enabled:
        audit_record(
            event=SkillAuditEvent.INGEST_DISABLED_ON_CHANGE,
            actor=actor,
            skill=skill,
            detail="checksum changed",
        )
        tally.disabled.append((item.path, "changed upstream"))
    else:
        reasons = [text for flag, text in ((changed, "content changed"), (returned, "back upstream")) if flag]
        audit_record(
            event=SkillAuditEvent.INGEST_UPDATED,
            actor=actor,
            skill=skill,
            detail=", ".join(reasons) or "trust level from source",
        )
    tally.updated.append(item.path)
    if changed:
        _flag(skill, item, actor, tally, blocked=high)


def _flag(skill: Skill, item: IngestedSkill, actor: Actor, tally: _Tally, *, blocked: bool) -> None:
    if not item.severity:
        return
    rules = tuple(dict.fromkeys(finding["rule"] for finding in item.findings))
    tally.flagged.append(FlaggedSkill(item.path, item.severity, rules))
    if blocked:
        audit_record(
            event=SkillAuditEvent.INJECTION_BLOCKED,
            actor=actor,
            skill=skill,
            detail=f"rules: {', '.join(rules)}",
        )


def _copy(skill: Skill, item: IngestedSkill, sha: str) -> None:
    parsed = item.parsed
    skill.name, skill.description, skill.body, skill.content = (
        parsed.name,
        parsed.description,
        parsed.body,
        item.content,
    )
    skill.license, skill.compatibility = parsed.license or "", parsed.compatibility or ""
    skill.metadata, skill.allowed_tools = dict(parsed.metadata), list(parsed.allowed_tools)
    skill.declares_allowed_tools = parsed.declares_allowed_tools
    skill.unknown_keys, skill.parse_warnings = dict(parsed.extra_front_matter), list(parsed.warnings)
    skill.checksum, skill.source_sha = parsed.checksum, sha
    skill.injection_findings, skill.injection_severity = list(item.findings), item.severity
    if item.severity == InjectionSeverity.HIGH:
        skill.is_enabled = False


def _save(skill: Skill, actor: Actor, reason: str) -> None:
    skill.full_clean()
    history_stamp(skill, actor=actor, reason=reason)
    skill.save()
