"""Typed skill errors with stable codes.

A SKILL.md that breaks a rule raises :class:`SkillParseError` (code ``skill_invalid``). Its ``rule`` is one
of :class:`SkillParseRule`; both the code and the rule values are API and are never renamed.
"""

from __future__ import annotations

from enum import StrEnum

from rest_framework import status

from config.errors import ApplicationError, ConflictError, NotFoundError


class SkillParseRule(StrEnum):
    """Which rule a SKILL.md broke. One value per distinct fix an editor has to make."""

    FILE_TOO_LARGE = "file_too_large"
    NOT_UTF8 = "not_utf8"
    FRONT_MATTER_MISSING = "front_matter_missing"
    FRONT_MATTER_UNTERMINATED = "front_matter_unterminated"
    FRONT_MATTER_TOO_LARGE = "front_matter_too_large"
    BODY_TOO_LARGE = "body_too_large"
    YAML_INVALID = "yaml_invalid"
    FRONT_MATTER_EMPTY = "front_matter_empty"
    FRONT_MATTER_NOT_MAPPING = "front_matter_not_mapping"
    FRONT_MATTER_KEY_INVALID = "front_matter_key_invalid"
    FRONT_MATTER_VALUE_INVALID = "front_matter_value_invalid"
    NAME_MISSING = "name_missing"
    NAME_INVALID = "name_invalid"
    NAME_TOO_LONG = "name_too_long"
    NAME_MIXED_SCRIPT = "name_mixed_script"
    NAME_FOLDER_MISMATCH = "name_folder_mismatch"
    DESCRIPTION_MISSING = "description_missing"
    DESCRIPTION_INVALID = "description_invalid"
    DESCRIPTION_TOO_LONG = "description_too_long"
    LICENSE_INVALID = "license_invalid"
    COMPATIBILITY_INVALID = "compatibility_invalid"
    COMPATIBILITY_TOO_LONG = "compatibility_too_long"
    METADATA_INVALID = "metadata_invalid"
    ALLOWED_TOOLS_INVALID = "allowed_tools_invalid"


class SkillParseError(ApplicationError):
    """A SKILL.md broke a rule. The message names the file and the rule; it never quotes the body.

    ``extra`` is ``{"path", "rule"}`` plus ``"line"`` (1-based, in the file) when the rule points at a line.
    """

    code = "skill_invalid"

    def __init__(self, *, path: str, rule: SkillParseRule, detail: str, line: int | None = None) -> None:
        where = f"{path}, line {line}" if line is not None else path
        super().__init__(
            f"{where}: {detail} (rule {rule.value})",
            extra={"path": path, "rule": rule.value} | ({"line": line} if line is not None else {}),
        )
        self.path = path
        self.rule = rule
        self.detail = detail
        self.line = line


class SkillSourceInvalid(ApplicationError):
    """A source's settings cannot be synced (unknown kind, unparsable URL, missing folder)."""

    code = "skill_source_invalid"


class SkillSourceTokenUnavailable(SkillSourceInvalid):
    """The source's ``token_env`` is not allowed, or the variable is unset: one message for both."""

    code = "skill_source_token_unavailable"


class SkillSyncInProgress(ConflictError):
    """Another sync of the same source holds its lock; nothing was fetched or stored."""

    code = "skill_sync_in_progress"


class SkillFetchError(ApplicationError):
    """Fetching a source failed as a whole; nothing was stored. Messages never carry tokens."""

    code = "skill_fetch_failed"
    http_status = status.HTTP_502_BAD_GATEWAY


class GitHubUrlRefused(SkillFetchError):
    """A URL is not https, not on the GitHub host allow-list, or carries credentials. No connection was made."""

    code = "github_url_refused"
    http_status = status.HTTP_400_BAD_REQUEST


class GitHubRedirectRefused(SkillFetchError):
    """GitHub answered with a redirect; redirects are never followed."""

    code = "github_redirect_refused"


class GitHubAccessDenied(SkillFetchError):
    """GitHub refused access (401/403, including rate limiting)."""

    code = "github_access_denied"


class GitHubResponseInvalid(SkillFetchError):
    """GitHub answered with an unexpected status, an oversized or malformed body."""

    code = "github_response_invalid"


class GitHubNotFound(SkillFetchError):
    """GitHub answered 404: the ref, repository or file does not exist (or the token cannot see it)."""

    code = "github_not_found"


class SkillArchiveRejected(SkillFetchError):
    """A skill archive broke a safety rule; ``rule`` says which. Nothing was extracted or stored."""

    code = "skill_archive_rejected"
    http_status = status.HTTP_400_BAD_REQUEST

    def __init__(self, message: str, *, rule: str) -> None:
        super().__init__(message, extra={"rule": rule})
        self.rule = rule


class SkillMarketplaceInvalid(SkillFetchError):
    """A ``.claude-plugin/marketplace.json`` is not the expected shape."""

    code = "skill_marketplace_invalid"
    http_status = status.HTTP_400_BAD_REQUEST


class SkillFingerprintMismatch(ConflictError):
    """The ingested set does not match the source's expected fingerprint; nothing was upserted or orphaned."""

    code = "skill_fingerprint_mismatch"


class SkillStateConflict(ConflictError):
    """An editor action does not fit the skill's state (orphaned, unacknowledged high findings)."""

    code = "skill_state_conflict"


class SkillSourceAdminOnly(ApplicationError):
    """Local folders and uploaded archives name paths on the server: only an admin may add those."""

    code = "skill_source_admin_only"


class SkillNotFound(NotFoundError):
    """No skill, or no skill source, with that id."""
