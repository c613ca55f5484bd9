"""Registering MCP servers: an HTTP server's URL must be on the allow-list (an empty list admits none),
and a stdio server (a command run on this machine) needs a permission of its own."""

from __future__ import annotations

import sys

import pytest
from django.contrib.auth.models import Permission, User
from django.core.exceptions import ValidationError

from tests.fakes.mcp_servers import HttpMcpServer, stdio_args
from tools.models import McpServer, McpTransport, url_allowed

pytestmark = pytest.mark.django_db

ADD_URL = "/admin/tools/mcpserver/add/"


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("http://127.0.0.1:8900/mcp", True),
        ("http://127.0.0.1:8900/mcp/tools", True),
        ("http://127.0.0.1:8900/mcpx", False),
        ("http://127.0.0.1:8900/other", False),
        ("http://127.0.0.1:8901/mcp", False),
        ("https://127.0.0.1:8900/mcp", False),
        ("http://localhost:8900/mcp", False),
        ("http://user:pw@127.0.0.1:8900/mcp", False),
        ("file:///etc/passwd", False),
        ("https://tools.internal/anything", True),
        ("https://tools.internal:443/x", True),
        ("https://tools.internal:8443/x", False),
    ],
)
def test_a_url_is_allowed_under_an_entry_of_the_allow_list(url, allowed):
    assert url_allowed(url, ["http://127.0.0.1:8900/mcp", "https://tools.internal"]) is allowed


def test_an_empty_allow_list_admits_no_url():
    assert url_allowed("http://127.0.0.1:8900/mcp", []) is False


def http_row(url: str) -> McpServer:
    return McpServer(
        name="tools",
        transport=McpTransport.STREAMABLE_HTTP,
        url=url,
        trust_zone="local",
        data_class="editor_content",
    )


def test_a_server_off_the_allow_list_cannot_be_saved(settings):
    settings.MCP_SERVER_URL_ALLOWLIST = ["https://tools.internal/mcp"]
    with pytest.raises(ValidationError) as refused:
        http_row("http://127.0.0.1:8900/mcp").full_clean()
    assert refused.value.message_dict == {
        "url": ["This URL is not on the allow-list (MCP_SERVER_URL_ALLOWLIST)."]
    }


def test_by_default_no_http_server_can_be_saved():
    with pytest.raises(ValidationError) as refused:
        http_row("https://tools.internal/mcp").full_clean()
    assert refused.value.message_dict == {
        "url": ["This URL is not on the allow-list (MCP_SERVER_URL_ALLOWLIST)."]
    }


NAME_RULE = "Lowercase letters, digits, '-' and single '_' between them only (no '_' at the end)."


@pytest.mark.parametrize("name", ["a_", "a__b", "_a", "A", "a.b"])
def test_a_name_that_would_make_tool_names_ambiguous_cannot_be_saved(settings, name):
    # Server "a_" with tool "x" and server "a" with tool "_x" would both offer "mcp__a___x".
    settings.MCP_SERVER_URL_ALLOWLIST = ["https://tools.internal/mcp"]
    row = http_row("https://tools.internal/mcp")
    row.name = name
    with pytest.raises(ValidationError) as refused:
        row.full_clean()
    assert refused.value.message_dict == {"name": [NAME_RULE]}


@pytest.mark.parametrize("name", ["a", "a_b", "a-b_c9", "a_-"])
def test_a_name_whose_underscores_sit_between_other_characters_is_saved(settings, name):
    settings.MCP_SERVER_URL_ALLOWLIST = ["https://tools.internal/mcp"]
    row = http_row("https://tools.internal/mcp")
    row.name = name
    row.full_clean()


def test_the_admin_refuses_a_name_ending_in_an_underscore_and_stores_nothing(admin_client, settings):
    settings.MCP_SERVER_URL_ALLOWLIST = ["https://tools.internal/mcp"]
    response = admin_client.post(ADD_URL, form(name="a_", url="https://tools.internal/mcp"))
    assert response.status_code == 200
    assert NAME_RULE.replace("'", "&#x27;") in response.content.decode()
    assert not McpServer.objects.exists()


def form(**fields: str) -> dict[str, str]:
    return {
        "name": "tools",
        "transport": "streamable_http",
        "url": "",
        "command": "",
        "args": "[]",
        "trust_zone": "local",
        "data_class": "editor_content",
        "timeout_seconds": "5",
        "is_active": "on",
        **fields,
    }


def test_the_admin_refuses_a_url_off_the_allow_list_and_stores_nothing(admin_client, settings):
    settings.MCP_SERVER_URL_ALLOWLIST = ["https://tools.internal/mcp"]
    response = admin_client.post(ADD_URL, form(url="http://127.0.0.1:8900/mcp"))
    assert response.status_code == 200
    assert "This URL is not on the allow-list (MCP_SERVER_URL_ALLOWLIST)." in response.content.decode()
    assert not McpServer.objects.exists()


@pytest.fixture
def staff(client):
    user = User.objects.create_user(username="tools-admin", password="pw-" + "tools", is_staff=True)
    for codename in ("add_mcpserver", "change_mcpserver", "view_mcpserver"):
        user.user_permissions.add(Permission.objects.get(codename=codename))
    client.force_login(user)
    return user


def stdio_form() -> dict[str, str]:
    args = '["' + '", "'.join(stdio_args()) + '"]'
    return form(name="local-tools", transport="stdio", command=sys.executable, args=args)


def test_a_stdio_server_needs_its_own_permission(client, staff):
    response = client.post(ADD_URL, stdio_form())
    assert response.status_code == 200
    assert "needs the permission" in response.content.decode()
    assert not McpServer.objects.exists()


def test_with_the_permission_a_stdio_server_is_registered(client, staff):
    staff.user_permissions.add(Permission.objects.get(codename="register_stdio_mcp_server"))
    response = client.post(ADD_URL, stdio_form())
    assert response.status_code == 302
    server = McpServer.objects.get()
    assert (server.name, server.transport, server.command, server.args) == (
        "local-tools",
        "stdio",
        sys.executable,
        stdio_args(),
    )


def test_an_existing_stdio_server_cannot_be_changed_without_the_permission(client, staff):
    server = McpServer.objects.create(
        name="local-tools", transport="stdio", command="true", trust_zone="local", data_class="editor_content"
    )
    response = client.post(
        f"/admin/tools/mcpserver/{server.pk}/change/",
        form(name="local-tools", transport="stdio", command="sh"),
    )
    assert response.status_code == 200
    assert "needs the permission" in response.content.decode()
    server.refresh_from_db()
    assert server.command == "true"


def test_the_change_page_lists_the_servers_tools(admin_client, settings):
    with HttpMcpServer() as mcp:
        settings.MCP_SERVER_URL_ALLOWLIST = [mcp.url]
        assert admin_client.post(ADD_URL, form(url=mcp.url)).status_code == 302
        server = McpServer.objects.get()
        page = admin_client.get(f"/admin/tools/mcpserver/{server.pk}/change/").content.decode()
    assert "<code>mcp__tools__add</code> — Add two integers." in page
    assert "<code>bad.name</code>: not offered, its name is not a valid function name" in page
    assert "<code>shady</code>: not offered, it reads as a prompt injection (instruction_override)" in page
    assert admin_client.get("/admin/tools/mcpserver/").status_code == 200


def test_a_stdio_servers_arguments_are_typed_one_a_line(client, staff):
    staff.user_permissions.add(Permission.objects.get(codename="register_stdio_mcp_server"))
    typed = "\n".join(stdio_args()) + "\n--label\nmine, yours\n--label\nmine, yours\n\n"
    response = client.post(ADD_URL, {**stdio_form(), "args": typed})
    assert response.status_code == 302
    server = McpServer.objects.get()
    assert server.args == [*stdio_args(), "--label", "mine, yours", "--label", "mine, yours"]
    page = client.get(f"/admin/tools/mcpserver/{server.pk}/change/").content.decode()
    assert '">\n' + "\n".join(server.args) + "</textarea>" in page
