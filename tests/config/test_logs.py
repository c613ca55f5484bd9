"""LOG_FORMAT: text by default, one JSON object per line with json, and a stop at a malformed value."""

from __future__ import annotations

import json
import logging
import logging.config
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = "import logging; logging.getLogger('probe').warning('probe %s', 1)"


def manage(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "APP_VAR_DIR": str(tmp_path),
    }
    environment.pop("LOG_FORMAT", None)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**environment, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_log_format_json_writes_one_json_object_per_record_where_the_default_writes_text(tmp_path):
    text = manage(tmp_path, "shell", "-c", PROBE)
    assert text.returncode == 0, text.stderr
    assert text.stderr.splitlines()[-1].endswith(" WARNING probe probe 1")

    result = manage(tmp_path, "shell", "-c", PROBE, LOG_FORMAT="json")
    assert result.returncode == 0, result.stderr
    line = json.loads(result.stderr.splitlines()[-1])
    assert list(line) == ["time", "level", "logger", "message"]
    assert (line["level"], line["logger"], line["message"]) == ("WARNING", "probe", "probe 1")
    assert line["time"].endswith("+00:00")


def test_a_malformed_log_format_stops_start_up_naming_the_variable(tmp_path):
    result = manage(tmp_path, "check", LOG_FORMAT="yaml")
    assert result.returncode == 1
    assert "LOG_FORMAT must be one of ['text', 'json'], got 'yaml'" in result.stderr


@pytest.fixture
def logging_at_info():
    """The service's LOGGING at LOG_LEVEL=INFO (whatever this environment sets), then the settings' again."""
    from django.conf import settings

    from config.logs import logging_config

    logging.config.dictConfig(logging_config(log_format="text", level="INFO"))
    yield
    logging.config.dictConfig(settings.LOGGING)


def test_a_provider_call_writes_no_line_of_the_sdks_http_client_below_warning(caplog, logging_at_info):
    """The SDK's HTTP client (httpx2) logs every request at INFO; the service's LOGGING keeps it quiet
    below WARNING, so a call pays no log line (config/logs.py, HTTP_CLIENTS). With the client's level
    reset, the same call writes its line: the test sees the SDK's logger."""
    from context_assembly.messages import Message
    from providers.openai_compatible import OpenAICompatibleAdapter
    from providers.values import ProviderCall, ProviderConfig
    from tests.fakes.provider_server import FakeProvider

    def sdk_lines() -> list[tuple[str, int]]:
        return [(record.name, record.levelno) for record in caplog.records if record.name.startswith("httpx")]

    caplog.set_level(logging.INFO)
    with FakeProvider(default_reply="Done.") as fake:
        config = ProviderConfig(identifier="p", kind="openai_compatible", base_url=fake.openai_base_url)
        adapter = OpenAICompatibleAdapter(config)
        call = ProviderCall(model_id="m-1", messages=(Message(role="user", content="Hi."),), max_tokens=8)
        assert adapter.send(call, adapter.request_body(call)).text == "Done."
        assert sdk_lines() == []
        client = logging.getLogger("httpx2")
        assert client.level == logging.WARNING
        client.setLevel(logging.NOTSET)
        try:
            adapter.send(call, adapter.request_body(call))
        finally:
            client.setLevel(logging.WARNING)
    assert sdk_lines() == [("httpx2", logging.INFO)]


def test_log_level_debug_keeps_the_http_clients_lines():
    from config.logs import HTTP_CLIENTS, logging_config

    assert {
        name: logging_config(log_format="text", level="INFO")["loggers"][name] for name in HTTP_CLIENTS
    } == {
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
    }
    assert not set(HTTP_CLIENTS) & set(logging_config(log_format="text", level="debug")["loggers"])
