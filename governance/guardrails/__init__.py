"""Guardrails on everything that reaches a provider: secret redaction and prompt-injection scanning."""

from __future__ import annotations

from .injection import InjectionFinding, InjectionSeverity, max_severity, scan_for_injection
from .redaction import Finding, Redaction, RedactionFailed, redact, redact_json

__all__ = [
    "Finding",
    "InjectionFinding",
    "InjectionSeverity",
    "Redaction",
    "RedactionFailed",
    "max_severity",
    "redact",
    "redact_json",
    "scan_for_injection",
]
