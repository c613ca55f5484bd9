"""What redaction returns: findings (kind and span, never the value), the redacted text, and the error
that refuses a payload when the scanner fails."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rest_framework import status

from config.errors import ApplicationError

PLACEHOLDER_PREFIX = "[REDACTED:"


class RedactionFailed(ApplicationError):
    """The secret scanner raised; the payload must not be sent. Carries no content."""

    code = "redaction_failed"
    http_status = status.HTTP_503_SERVICE_UNAVAILABLE


@dataclass(frozen=True, slots=True)
class Finding:
    """One redacted span of the original text. Never holds the secret itself."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Redaction:
    text: str
    findings: tuple[Finding, ...]
    count: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "count", len(self.findings))

    def counts_by_kind(self) -> dict[str, int]:
        return dict(sorted(Counter(finding.kind for finding in self.findings).items()))


def placeholder(kind: str) -> str:
    return f"{PLACEHOLDER_PREFIX}{kind}]"
