"""The boundary values and the one failure classifier shared by every adapter."""

from __future__ import annotations

import email.utils
import json
import random

import httpx2
import pytest

from context_assembly.messages import FrozenMapping, Message
from governance.vocabulary import Provenance
from providers.base import ProviderAdapter
from providers.failures import FailureClass, ProviderError, classify_status, parse_retry_after
from providers.values import ProviderCall, ProviderConfig, ProviderReply, Usage

API_KEY = "-".join(["test", "key", str(random.Random(61).randint(10_000, 99_999)), "base"])
CALL = ProviderCall(model_id="m", messages=(Message(role="user", content="hello"),), max_tokens=8)


def make_config(**overrides) -> ProviderConfig:
    values = {
        "identifier": "p",
        "kind": "openai_compatible",
        "base_url": "http://127.0.0.1:9/v1",
        **overrides,
    }
    return ProviderConfig(**values)


class Raising(ProviderAdapter):
    def __init__(self, exc: BaseException) -> None:
        super().__init__(make_config(api_key=API_KEY))
        self.exc = exc

    def _request_body(self, call: ProviderCall) -> dict:
        return {"model": call.model_id}

    def _send(self, call: ProviderCall, body: dict) -> ProviderReply:
        raise self.exc


def test_exactly_connection_timeout_rate_limit_and_server_error_are_retryable():
    assert {c for c in FailureClass if c.retryable} == {
        FailureClass.CONNECTION,
        FailureClass.TIMEOUT,
        FailureClass.RATE_LIMIT,
        FailureClass.SERVER_ERROR,
    }
    assert FailureClass.values == [
        "connection",
        "timeout",
        "rate_limit",
        "auth",
        "configuration",
        "client_error",
        "context_overflow",
        "server_error",
        "malformed",
        "unknown",
    ]


def test_provider_error_renders_code_status_and_classification():
    error = ProviderError(
        "provider 'p' call failed",
        failure_class=FailureClass.RATE_LIMIT,
        provider="p",
        status=429,
        retry_after=2.0,
    )
    assert (error.code, error.http_status, error.retryable) == ("provider_error", 502, True)
    assert error.as_dict() == {
        "code": "provider_error",
        "message": "provider 'p' call failed",
        "extra": {
            "provider": "p",
            "failure_class": "rate_limit",
            "retryable": True,
            "status": 429,
            "retry_after": 2.0,
        },
    }


@pytest.mark.parametrize(
    "status, body, expected",
    [
        (
            400,
            {"error": {"code": "context_length_exceeded", "message": "too long"}},
            FailureClass.CONTEXT_OVERFLOW,
        ),
        (
            400,
            {"error": {"message": "This model's maximum context length is 8192 tokens"}},
            FailureClass.CONTEXT_OVERFLOW,
        ),
        (413, "prompt is too long: 210000 tokens > 200000 maximum", FailureClass.CONTEXT_OVERFLOW),
        (400, {"error": {"message": "Invalid value for temperature"}}, FailureClass.CLIENT_ERROR),
        (401, None, FailureClass.AUTH),
        (403, None, FailureClass.AUTH),
        (404, None, FailureClass.CONFIGURATION),
        (408, None, FailureClass.TIMEOUT),
        (409, None, FailureClass.CLIENT_ERROR),
        (422, {"detail": "bad"}, FailureClass.CLIENT_ERROR),
        (429, None, FailureClass.RATE_LIMIT),
        (500, None, FailureClass.SERVER_ERROR),
        (503, "maximum context length", FailureClass.SERVER_ERROR),
        (529, None, FailureClass.SERVER_ERROR),
        (200, {"type": "error", "error": {"type": "overloaded_error"}}, FailureClass.SERVER_ERROR),
        (200, {"type": "error", "error": {"type": "rate_limit_error"}}, FailureClass.RATE_LIMIT),
        (302, None, FailureClass.UNKNOWN),
    ],
)
def test_http_statuses_are_classified(status, body, expected):
    assert classify_status(status, body) == expected


def test_retry_after_is_read_from_milliseconds_seconds_or_an_http_date():
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    now = 1_800_000_000.0
    date = email.utils.formatdate(now + 12, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=now) == 12.0
    assert parse_retry_after({"retry-after": email.utils.formatdate(now - 5, usegmt=True)}, now=now) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    assert parse_retry_after(None) is None


@pytest.mark.parametrize(
    "exc, expected",
    [
        (json.JSONDecodeError("Expecting value", "{", 1), FailureClass.MALFORMED),
        (AttributeError("'NoneType' object has no attribute 'output_tokens'"), FailureClass.MALFORMED),
        (KeyError("choices"), FailureClass.MALFORMED),
        (httpx2.RemoteProtocolError("incomplete chunked read"), FailureClass.CONNECTION),
        (httpx2.ConnectError("refused"), FailureClass.CONNECTION),
        (httpx2.ReadTimeout("slow"), FailureClass.TIMEOUT),
        (TimeoutError(), FailureClass.TIMEOUT),
        (ConnectionResetError(), FailureClass.CONNECTION),
        (TypeError("create() got an unexpected keyword argument"), FailureClass.UNKNOWN),
        (RuntimeError("surprise"), FailureClass.UNKNOWN),
    ],
)
def test_every_exception_becomes_a_provider_error_of_the_right_class(exc, expected):
    with pytest.raises(ProviderError) as raised:
        Raising(exc).complete(CALL)
    assert raised.value.failure_class == expected
    assert raised.value.extra["cause"] == type(exc).__name__
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_provider_errors_raised_inside_an_adapter_pass_through_unchanged():
    original = ProviderError("x", failure_class=FailureClass.AUTH, provider="p")
    with pytest.raises(ProviderError) as raised:
        Raising(original).complete(CALL)
    assert raised.value is original


def test_usage_unavailable_is_all_none_and_reported_needs_a_figure():
    assert Usage.unavailable() == Usage(None, None, None, Provenance.UNAVAILABLE)
    assert Usage.reported(None, None, None) == Usage.unavailable()
    assert Usage.reported(10, None, 2) == Usage(10, None, 2, Provenance.PROVIDER_REPORTED)


def test_config_hides_the_api_key_and_freezes_options():
    config = make_config(api_key=API_KEY, options={"script": [{"text": "hi"}]})
    assert API_KEY not in repr(config)
    assert isinstance(config.options, FrozenMapping)
    assert config.options["script"] == (FrozenMapping({"text": "hi"}),)
    assert hash(config) == hash(make_config(api_key=API_KEY, options={"script": [{"text": "hi"}]}))


@pytest.mark.parametrize(
    "overrides, problem",
    [
        ({"timeout_seconds": 0}, "timeout_seconds must be positive"),
        ({"timeout_seconds": float("inf")}, "timeout_seconds must be a finite number"),
        ({"max_retries": -1}, "max_retries must be 0-10"),
        ({"max_retries": True}, "max_retries must be an integer"),
        ({"options": {"latency": object()}}, "options must be a JSON object"),
    ],
)
def test_invalid_config_is_a_configuration_failure(overrides, problem):
    with pytest.raises(ProviderError) as raised:
        make_config(**overrides)
    assert (raised.value.failure_class, raised.value.retryable) == (FailureClass.CONFIGURATION, False)
    assert problem in raised.value.message


def test_call_and_reply_refuse_impossible_values():
    with pytest.raises(ValueError, match="max_tokens"):
        ProviderCall(model_id="m", messages=(), max_tokens=0)
    with pytest.raises(ValueError, match="finish_reason"):
        ProviderReply("", (), "done", Usage.unavailable(), "m", "r")
    assert ProviderCall(model_id="m", messages=[CALL.messages[0]], max_tokens=1).messages == CALL.messages
