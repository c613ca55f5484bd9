"""MCP tool servers: where a server runs, how it is reached, and the class of what its tools return.

A server is reached over streamable HTTP at a URL on the allow-list (``MCP_SERVER_URL_ALLOWLIST``;
empty: no HTTP server may be registered or called), or run as a local command over stdio (saving one
needs the ``register_stdio_mcp_server`` permission: the command runs with the service's rights).
docs/decisions/0023-mcp-tool-servers.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from catalog.models.catalog import InTrustZone
from governance.vocabulary import DataClass, TrustZone

STDIO_PERMISSION = "register_stdio_mcp_server"
# A server's name is part of its tools' names (``mcp__<server>__<tool>``), which providers limit to
# ``[a-zA-Z0-9_-]{1,64}``; two underscores separate the parts, so a name holds none in a row, and
# none at its end: server ``a_`` with tool ``x`` and server ``a`` with tool ``_x`` would both be
# ``mcp__a___x``. Every ``_`` is followed by a letter, digit or ``-``.
SERVER_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]|_(?=[a-z0-9-]))*$")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class McpTransport(models.TextChoices):
    STREAMABLE_HTTP = "streamable_http", "Streamable HTTP (a URL on the allow-list)"
    STDIO = "stdio", "stdio (a local command)"


def url_allowed(url: str, allowlist: Iterable[str] | None = None) -> bool:
    """Whether ``url`` is on the allow-list: same scheme, host and port as an entry, and a path under
    the entry's path. An empty list admits nothing; a malformed URL or entry matches nothing."""
    entries = settings.MCP_SERVER_URL_ALLOWLIST if allowlist is None else allowlist
    try:
        target = urlsplit(url)
        port = target.port or _DEFAULT_PORTS.get(target.scheme)
    except ValueError:
        return False
    if target.scheme not in _DEFAULT_PORTS or not target.hostname or target.username or target.password:
        return False
    for entry in entries:
        try:
            allowed = urlsplit(entry)
            allowed_port = allowed.port or _DEFAULT_PORTS.get(allowed.scheme)
        except ValueError:
            continue
        if (allowed.scheme, allowed.hostname, allowed_port) != (target.scheme, target.hostname, port):
            continue
        prefix = allowed.path.rstrip("/")
        if target.path == prefix or target.path.startswith(prefix + "/") or not prefix:
            return True
    return False


class McpServer(InTrustZone, models.Model):
    """One MCP server whose tools may be offered to models (tools/mcp.py)."""

    name = models.CharField(
        max_length=24,
        unique=True,
        validators=[
            RegexValidator(
                SERVER_NAME,
                "Lowercase letters, digits, '-' and single '_' between them only (no '_' at the end).",
            )
        ],
        help_text="Its tools are named mcp__<name>__<tool>; a configuration allows them by that name "
        "or all of them by the group mcp:<name>.",
    )
    transport = models.CharField(max_length=16, choices=McpTransport.choices)
    url = models.URLField(blank=True, help_text="Streamable HTTP: the endpoint, e.g. http://host:port/mcp.")
    command = models.CharField(max_length=500, blank=True, help_text="stdio: the program to run.")
    args = models.JSONField(default=list, blank=True, help_text="stdio: its arguments, a list of strings.")
    # Where the server runs: the arguments a model writes are sent there, so a call whose step's label
    # exceeds this zone is refused. Read through TrustZone.parse (unknown: external_global).
    trust_zone = models.CharField(max_length=32, choices=TrustZone.choices)
    data_class = models.CharField(
        max_length=32,
        choices=DataClass.choices,
        help_text="The class of what its tools return: a tool is offered only where its class may go.",
    )
    timeout_seconds = models.FloatField(
        default=10.0, validators=[MinValueValidator(0.1), MaxValueValidator(120)]
    )
    is_active = models.BooleanField(default=True)
    # docs/decisions/0040-integrity-labels-and-consequential-tools.md: a server's own annotations are
    # claims by the server; they count only once an editor vouches for it.
    annotations_trusted = models.BooleanField(
        default=False,
        db_default=False,
        verbose_name="trust its tool annotations",
        help_text="Believe the server's tool annotations: a tool it marks read-only and closed-world "
        "(readOnlyHint true, openWorldHint false) then runs from an untrusted context like any "
        "read-only tool. Otherwise every tool of this server counts as acting on the world.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "agents_mcpserver"  # kept from before the split (decision 0031)
        ordering = ["name"]
        verbose_name = "MCP server"
        permissions = [(STDIO_PERMISSION, "Can register an MCP server run as a local command (stdio)")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(timeout_seconds__gte=0.1, timeout_seconds__lte=120),
                name="mcp_server_timeout_range",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def output_class(self) -> DataClass:
        """The stored class, read fail-closed: empty or unknown is ``secret_adjacent``."""
        return DataClass.parse(self.data_class) or DataClass.SECRET_ADJACENT

    @property
    def group(self) -> str:
        return f"mcp:{self.name}"

    def clean(self) -> None:
        super().clean()
        errors: dict[str, str] = {}
        if self.transport == McpTransport.STREAMABLE_HTTP:
            if not self.url:
                errors["url"] = "A streamable HTTP server needs its URL."
            elif not url_allowed(self.url):
                errors["url"] = "This URL is not on the allow-list (MCP_SERVER_URL_ALLOWLIST)."
            if self.command or self.args:
                errors["command"] = "A streamable HTTP server has no command or arguments."
        elif self.transport == McpTransport.STDIO:
            if not self.command.strip():
                errors["command"] = "A stdio server needs its command."
            if not isinstance(self.args, list) or not all(isinstance(a, str) for a in self.args):
                errors["args"] = "Must be a list of strings."
            if self.url:
                errors["url"] = "A stdio server has no URL."
        if errors:
            raise ValidationError(errors)


class ToolSetting(models.Model):
    """Switch a registered tool off installation-wide. A tool without a row is enabled."""

    name = models.CharField(max_length=100, unique=True)
    is_enabled = models.BooleanField(default=True)

    class Meta:
        db_table = "agents_toolsetting"  # kept from before the split (decision 0031)
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
