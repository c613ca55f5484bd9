"""MCP servers in the admin: register one, see the tools it lists and which it cannot offer.

A stdio server runs a command on the service's machine, so saving one (new or changed) needs the
``tools.register_stdio_mcp_server`` permission besides the change permission; an HTTP server's URL
must be on the allow-list (``McpServer.clean``).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from config.string_list import StringListField
from tools.mcp import server_listing, server_tools
from tools.models import STDIO_PERMISSION, McpServer, McpTransport

STDIO_PERMISSION_NAME = f"tools.{STDIO_PERMISSION}"


def may_save(user: Any, transport: str) -> bool:
    return transport != McpTransport.STDIO or bool(user.has_perm(STDIO_PERMISSION_NAME))


class McpServerForm(forms.ModelForm):
    request: HttpRequest | None = None  # set by McpServerAdmin.get_form
    url = forms.URLField(
        required=False,
        assume_scheme="https",
        help_text=McpServer._meta.get_field("url").help_text,
    )
    args = StringListField(
        label="Arguments",
        lines=True,
        what="arguments",
        help_text="stdio: the program's arguments, one a line.",
    )

    class Meta:
        model = McpServer
        fields = (
            "name",
            "transport",
            "url",
            "command",
            "args",
            "trust_zone",
            "data_class",
            "annotations_trusted",
            "timeout_seconds",
            "is_active",
        )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        transport = cleaned.get("transport") or (self.instance.transport if self.instance.pk else "")
        stored_stdio = self.instance.pk is not None and self.instance.transport == McpTransport.STDIO
        user = getattr(self.request, "user", None)
        if (transport == McpTransport.STDIO or stored_stdio) and not may_save(user, McpTransport.STDIO):
            raise ValidationError(
                "Saving a stdio MCP server (a command run on this machine) needs the permission "
                "“Can register an MCP server run as a local command (stdio)”."
            )
        return cleaned


@admin.register(McpServer)
class McpServerAdmin(admin.ModelAdmin):
    form = McpServerForm
    list_display = ("name", "transport", "trust_zone", "data_class", "timeout_seconds", "is_active")
    list_filter = ("transport", "trust_zone", "data_class", "is_active")
    search_fields = ("name", "url", "command")
    readonly_fields = ("tools", "updated_at")
    fieldsets = (
        (None, {"fields": ("name", "transport", "is_active")}),
        ("Where", {"fields": ("url", "command", "args", "timeout_seconds")}),
        ("Governance", {"fields": ("trust_zone", "data_class", "annotations_trusted")}),
        ("Tools", {"fields": ("tools", "updated_at")}),
    )

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        return type(form.__name__, (form,), {"request": request})

    def save_model(self, request: HttpRequest, obj: McpServer, form: Any, change: bool) -> None:
        # The form refuses first, with a message; this holds for any other form the admin might use.
        if not may_save(request.user, obj.transport):
            raise PermissionDenied("Saving a stdio MCP server needs its own permission.")
        super().save_model(request, obj, form, change)

    @admin.display(description="Tools it lists")
    def tools(self, obj: McpServer) -> str:
        if obj.pk is None:
            return "Listed once the server is saved."
        listing = server_listing(obj)
        if listing.error:
            return f"Could not be listed: {listing.error}"
        tools, skipped = server_tools(obj)
        if not tools and not skipped:
            return "None."
        return format_html(
            "<ul>{}{}</ul>",
            format_html_join("", "<li><code>{}</code> — {}</li>", ((t.name, t.description) for t in tools)),
            format_html_join("", "<li><code>{}</code>: not offered, {}</li>", skipped),
        )
