"""The fake provider, driven by the real ``openai`` and ``anthropic`` SDKs over loopback HTTP."""

from __future__ import annotations

import http.client
import json
import random
import socket
import threading
import time
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from context_assembly.encodings import get_encoding
from tests.fakes.provider_server import (
    FakeProvider,
    HttpError,
    RawReply,
    Reply,
    context_length_exceeded,
    rate_limited,
    server_error,
)

# Built at run time so no secret-shaped literal lives in the repository.
API_KEY = "-".join(["fake", "key", str(random.Random(20).randint(10_000, 99_999))])
TIMEOUT = 1.5
USER = [{"role": "user", "content": "What is the capital of France?"}]


def o200k(text: str) -> int:
    return len(get_encoding("o200k_base").encode(text))


def cookbook_prompt_tokens(messages: list[dict[str, str]]) -> int:
    """The OpenAI cookbook count, written out independently of the fake."""
    total = 3
    for message in messages:
        total += 3 + sum(o200k(value) for value in message.values()) + (1 if "name" in message else 0)
    return total


def openai_client(fake: FakeProvider, **options: Any) -> openai.OpenAI:
    options = {"api_key": API_KEY, "max_retries": 0, "timeout": TIMEOUT, **options}
    return openai.OpenAI(base_url=fake.openai_base_url, **options)


def anthropic_client(fake: FakeProvider, **options: Any) -> anthropic.Anthropic:
    options = {"api_key": API_KEY, "max_retries": 0, "timeout": TIMEOUT, **options}
    return anthropic.Anthropic(base_url=fake.anthropic_base_url, **options)


def chat(fake: FakeProvider, **kwargs: Any) -> Any:
    return openai_client(fake).chat.completions.create(model="gpt-4o-mini", messages=USER, **kwargs)


def message(fake: FakeProvider, **kwargs: Any) -> Any:
    return anthropic_client(fake).messages.create(model="claude-x", max_tokens=64, messages=USER, **kwargs)


def post(fake: FakeProvider, path: str, body: bytes, method: str = "POST", **headers: str) -> tuple[int, Any]:
    connection = http.client.HTTPConnection(*fake.address, timeout=TIMEOUT)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


# --- text replies and usage ---------------------------------------------------------------------------


def test_openai_json_text_reply_reports_tiktoken_usage_of_what_was_sent(fake_provider):
    fake_provider.script("Paris is the capital.")
    completion = chat(fake_provider)
    assert completion.choices[0].message.content == "Paris is the capital."
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "gpt-4o-mini"
    assert completion.usage.prompt_tokens == cookbook_prompt_tokens(USER) == 14
    assert completion.usage.completion_tokens == o200k("Paris is the capital.")
    assert completion.usage.total_tokens == 14 + o200k("Paris is the capital.")


def test_openai_stream_yields_text_pieces_and_a_final_usage_chunk(fake_provider):
    fake_provider.script("Paris is the capital of France.")
    chunks = list(chat(fake_provider, stream=True, stream_options={"include_usage": True}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Paris is the capital of France."
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == []
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (
        cookbook_prompt_tokens(USER),
        o200k("Paris is the capital of France."),
    )
    assert [c.usage for c in chunks[:-1]] == [None] * (len(chunks) - 1)


def test_openai_stream_without_include_usage_sends_no_usage_chunk(fake_provider):
    chunks = list(chat(fake_provider, stream=True))
    assert [c.usage for c in chunks] == [None] * len(chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "ok"


def test_anthropic_json_text_reply_counts_system_as_a_leading_message(fake_provider):
    fake_provider.script("Paris.")
    reply = message(fake_provider, system="Answer tersely.")
    assert [block.text for block in reply.content] == ["Paris."]
    assert reply.stop_reason == "end_turn"
    expected = cookbook_prompt_tokens([{"role": "system", "content": "Answer tersely."}, *USER])
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (expected, o200k("Paris."))
    assert reply.usage.cache_read_input_tokens == 0


def test_anthropic_stream_helper_accumulates_text_and_usage(fake_provider):
    fake_provider.script("Paris is the capital of France.")
    client = anthropic_client(fake_provider)
    with client.messages.stream(model="claude-x", max_tokens=64, messages=USER) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert pieces == ["Paris is", " the cap", "ital of ", "France."]
    assert final.content[0].text == "Paris is the capital of France."
    assert final.stop_reason == "end_turn"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (
        14,
        o200k("Paris is the capital of France."),
    )


def test_usage_counts_names_per_the_cookbook_rule(fake_provider):
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "name": "alice", "content": "Hello"},
        {"role": "assistant", "content": "Hi."},
    ]
    completion = openai_client(fake_provider).chat.completions.create(model="m", messages=messages)
    assert completion.usage.prompt_tokens == cookbook_prompt_tokens(messages)
    assert cookbook_prompt_tokens(messages) == 3 + (3 + 1 + 4) + (3 + 1 + 1 + 1 + 1) + (3 + 1 + 2)


def test_explicit_token_overrides_win_over_counting(fake_provider):
    fake_provider.script(Reply(text="x", prompt_tokens=1000, completion_tokens=7))
    fake_provider.script(Reply(text="x", prompt_tokens=1000, completion_tokens=7))
    usage = chat(fake_provider).usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (1000, 7, 1007)
    anthropic_usage = message(fake_provider).usage
    assert (anthropic_usage.input_tokens, anthropic_usage.output_tokens) == (1000, 7)


def test_openai_reports_cached_tokens_inside_prompt_tokens(fake_provider):
    fake_provider.script(Reply(text="ok", prompt_tokens=2048, cached_tokens=1024))
    usage = chat(fake_provider).usage
    assert (usage.prompt_tokens, usage.prompt_tokens_details.cached_tokens) == (2048, 1024)


def test_anthropic_reports_cache_reads_beside_uncached_input_tokens(fake_provider):
    fake_provider.script(Reply(text="ok", prompt_tokens=2048, cached_tokens=1024))
    usage = message(fake_provider).usage
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens) == (
        1024,
        1024,
        o200k("ok"),
    )


def test_reply_without_usage_has_none_in_both_formats(fake_provider):
    fake_provider.script(*[Reply(text="ok", include_usage=False)] * 4)
    assert chat(fake_provider).usage is None
    assert message(fake_provider).usage is None
    chunks = list(chat(fake_provider, stream=True, stream_options={"include_usage": True}))
    assert [c.usage for c in chunks] == [None] * len(chunks)
    events = list(message(fake_provider, stream=True))
    assert [e.type for e in events if getattr(e, "usage", "absent") is None] == ["message_delta"]
    assert events[0].message.usage is None


def test_anthropic_stream_helper_fails_on_a_stream_without_usage(fake_provider):
    # The SDK's accumulator assumes message_delta carries usage; real streams always do.
    fake_provider.script(Reply(text="ok", include_usage=False))
    client = anthropic_client(fake_provider)
    with (
        client.messages.stream(model="c", max_tokens=64, messages=USER) as stream,
        pytest.raises(AttributeError, match="'NoneType' object has no attribute 'output_tokens'"),
    ):
        stream.get_final_message()


def test_max_tokens_reached_maps_to_each_providers_stop_reason(fake_provider):
    fake_provider.script(*[Reply(text="cut", max_tokens_reached=True)] * 2)
    assert chat(fake_provider).choices[0].finish_reason == "length"
    assert message(fake_provider).stop_reason == "max_tokens"


# --- tool calls ---------------------------------------------------------------------------------------

WEATHER = ("call_1", "get_weather", {"city": "Paris", "unit": "celsius"})
TIME = ("call_2", "get_time", {"zone": "Europe/Paris"})


def test_openai_json_tool_calls_are_parsed_by_the_sdk(fake_provider):
    fake_provider.script(Reply.tools(WEATHER, TIME))
    completion = chat(fake_provider)
    calls = completion.choices[0].message.tool_calls
    assert completion.choices[0].finish_reason == "tool_calls"
    assert completion.choices[0].message.content is None
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls] == [WEATHER, TIME]
    arguments = ['{"city":"Paris","unit":"celsius"}', '{"zone":"Europe/Paris"}']
    assert completion.usage.completion_tokens == sum(o200k(a) for a in arguments)


def test_openai_streamed_tool_calls_accumulate_in_the_sdk_helper(fake_provider):
    fake_provider.script(Reply.tools(WEATHER, TIME, text="Checking."))
    client = openai_client(fake_provider)
    with client.chat.completions.stream(model="m", messages=USER) as stream:
        final = stream.get_final_completion()
    choice = final.choices[0]
    assert (choice.finish_reason, choice.message.content) == ("tool_calls", "Checking.")
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in choice.message.tool_calls] == [
        WEATHER,
        TIME,
    ]


def test_anthropic_json_tool_use_blocks(fake_provider):
    fake_provider.script(Reply.tools(WEATHER, text="Checking."))
    reply = message(fake_provider)
    assert reply.stop_reason == "tool_use"
    assert [block.type for block in reply.content] == ["text", "tool_use"]
    assert (reply.content[1].id, reply.content[1].name, reply.content[1].input) == WEATHER


def test_anthropic_streamed_tool_use_arrives_as_input_json_deltas(fake_provider):
    fake_provider.script(Reply.tools(WEATHER, TIME))
    events = list(message(fake_provider, stream=True))
    partial = "".join(
        e.delta.partial_json for e in events if e.type == "content_block_delta" and e.index == 0
    )
    assert json.loads(partial) == WEATHER[2]
    fake_provider.script(Reply.tools(WEATHER, TIME))
    with anthropic_client(fake_provider).messages.stream(model="c", max_tokens=64, messages=USER) as stream:
        final = stream.get_final_message()
    assert [(b.id, b.name, b.input) for b in final.content] == [WEATHER, TIME]
    assert final.stop_reason == "tool_use"


# --- errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("call, sdk", [(chat, openai), (message, anthropic)])
def test_rate_limit_surfaces_as_rate_limit_error_with_retry_after(fake_provider, call, sdk):
    fake_provider.script(rate_limited(retry_after=3))
    with pytest.raises(sdk.RateLimitError) as raised:
        call(fake_provider)
    assert raised.value.status_code == 429
    assert raised.value.response.headers["retry-after"] == "3"


def test_errors_use_each_providers_json_shape(fake_provider):
    fake_provider.script(context_length_exceeded(1000), context_length_exceeded(1000))
    with pytest.raises(openai.BadRequestError) as from_openai:
        chat(fake_provider)
    with pytest.raises(anthropic.BadRequestError) as from_anthropic:
        message(fake_provider)
    text = "prompt is too long: this model's maximum context length is 1000 tokens"
    assert from_openai.value.body == {
        "message": text,
        "type": "invalid_request_error",
        "param": None,
        "code": "context_length_exceeded",
    }
    assert from_openai.value.code == "context_length_exceeded"
    assert from_anthropic.value.body == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": text},
    }


@pytest.mark.parametrize("call, sdk", [(chat, openai), (message, anthropic)])
def test_server_error_surfaces_as_internal_server_error(fake_provider, call, sdk):
    fake_provider.script(server_error())
    with pytest.raises(sdk.InternalServerError) as raised:
        call(fake_provider)
    assert raised.value.status_code == 500


def test_wrong_api_key_gets_401_and_right_key_passes_as_bearer_or_x_api_key():
    with FakeProvider(api_key=API_KEY) as fake:
        with pytest.raises(openai.AuthenticationError):
            openai_client(fake, api_key=API_KEY + "x").chat.completions.create(model="m", messages=USER)
        with pytest.raises(anthropic.AuthenticationError) as raised:
            anthropic_client(fake, api_key=API_KEY + "x").messages.create(
                model="c", max_tokens=9, messages=USER
            )
        assert raised.value.body["error"]["type"] == "authentication_error"
        assert chat(fake).choices[0].message.content == "ok"
        body = json.dumps({"model": "c", "max_tokens": 9, "messages": USER}).encode()
        assert post(fake, "/v1/messages", body, **{"x-api-key": API_KEY})[0] == 200
        assert len(fake.requests) == 4


@pytest.mark.parametrize("call, sdk", [(chat, openai), (message, anthropic)])
def test_latency_beyond_the_client_timeout_raises_api_timeout_error(fake_provider, call, sdk):
    fake_provider.script(Reply(text="late", latency=1.0))
    started = time.monotonic()
    with pytest.raises(sdk.APITimeoutError):
        call(fake_provider, timeout=0.2)
    assert 0.2 <= time.monotonic() - started < 0.9  # gave up before the answer would have come


def test_latency_within_the_timeout_delays_the_answer(fake_provider):
    fake_provider.script(Reply(text="late", latency=0.2))
    started = time.monotonic()
    assert chat(fake_provider).choices[0].message.content == "late"
    assert time.monotonic() - started >= 0.2


@pytest.mark.parametrize("call", [chat, message])
@pytest.mark.parametrize("stream", [False, True])
def test_malformed_json_raises_json_decode_error_from_both_sdks(fake_provider, call, stream):
    fake_provider.script(Reply(text="ok", malformed=True))
    with pytest.raises(json.JSONDecodeError):
        result = call(fake_provider, stream=stream)
        if stream:
            list(result)


def test_truncated_openai_stream_raises_api_connection_error_after_the_first_half(fake_provider):
    fake_provider.script(Reply(text="abcdefgh" * 7, truncate_stream=True))
    received: list[str] = []
    with pytest.raises(openai.APIConnectionError) as raised:
        for chunk in chat(fake_provider, stream=True):
            received.append(chunk.choices[0].delta.content)
    # 10 events (role, 7 pieces, finish, [DONE]); the first 5 arrive.
    assert received == ["", "abcdefgh", "abcdefgh", "abcdefgh", "abcdefgh"]
    assert isinstance(raised.value.__cause__, httpx2.RemoteProtocolError)


def test_truncated_anthropic_stream_raises_the_raw_transport_error(fake_provider):
    fake_provider.script(Reply(text="abcdefgh" * 7, truncate_stream=True))
    with anthropic_client(fake_provider).messages.stream(model="c", max_tokens=64, messages=USER) as stream:
        received: list[str] = []
        with pytest.raises(httpx2.RemoteProtocolError, match="incomplete chunked read"):
            received.extend(stream.text_stream)
    # 13 events (start, ping, block start, 7 deltas, block stop, delta, stop); the first 6 arrive.
    assert received == ["abcdefgh"] * 3


# --- recording ----------------------------------------------------------------------------------------


def test_recorded_bodies_equal_what_the_sdks_sent(fake_provider):
    chat(fake_provider, temperature=0)
    message(fake_provider, system="Be brief.")
    openai_request, anthropic_request = fake_provider.requests
    assert (openai_request.method, openai_request.path) == ("POST", "/v1/chat/completions")
    assert openai_request.body == {"messages": USER, "model": "gpt-4o-mini", "temperature": 0}
    assert json.loads(openai_request.raw) == openai_request.body
    assert anthropic_request.path == "/v1/messages"
    assert anthropic_request.body == {
        "max_tokens": 64,
        "messages": USER,
        "model": "claude-x",
        "system": "Be brief.",
    }
    assert fake_provider.bodies() == [openai_request.body, anthropic_request.body]
    assert anthropic_request.headers["AUTHORIZATION"] == f"Bearer {API_KEY}"
    assert (
        anthropic_request.headers.get("Anthropic-Version") == anthropic_request.headers["anthropic-version"]
    )
    assert openai_request.time <= anthropic_request.time


def test_wire_text_finds_strings_whatever_json_escaping_the_client_used(fake_provider):
    secret_like = 'naïve "quoted"\nline ☃'
    openai_client(fake_provider).chat.completions.create(
        model="m", messages=[{"role": "user", "content": secret_like}]
    )
    assert secret_like in fake_provider.wire_text()
    assert "never-sent-marker" not in fake_provider.wire_text()


def test_scripted_replies_are_consumed_in_order_then_the_default_answers():
    with FakeProvider(default_reply="fallback") as fake:
        fake.script("first", Reply(text="second"))
        assert fake.pending() == 2
        assert chat(fake).choices[0].message.content == "first"
        assert message(fake).content[0].text == "second"
        assert chat(fake).choices[0].message.content == "fallback"
        assert fake.pending() == 0


def test_a_mapping_is_served_verbatim_as_a_provider_specific_reply(fake_provider):
    verbatim = {
        "id": "chatcmpl-x",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "raw"}, "finish_reason": "stop"}
        ],
    }
    fake_provider.script(verbatim, RawReply(b'{"oops": true}', status=418))
    assert chat(fake_provider).choices[0].message.content == "raw"
    with pytest.raises(openai.APIStatusError) as raised:
        chat(fake_provider)
    assert raised.value.status_code == 418


def test_reset_forgets_requests_and_script(fake_provider):
    fake_provider.script("one", "two")
    chat(fake_provider)
    fake_provider.reset()
    assert (fake_provider.requests, fake_provider.pending(), fake_provider.wire_text()) == ([], 0, "")
    assert chat(fake_provider).choices[0].message.content == "ok"


# --- robustness ---------------------------------------------------------------------------------------


def test_unknown_path_is_404_and_get_on_a_known_path_is_405(fake_provider):
    assert post(fake_provider, "/v1/no-such-endpoint", b"{}")[0] == 404
    assert post(fake_provider, "/v1/messages", b"", method="GET")[0] == 405
    assert [(r.method, r.path) for r in fake_provider.requests] == [
        ("POST", "/v1/no-such-endpoint"),
        ("GET", "/v1/messages"),
    ]


def test_invalid_json_request_is_400_in_the_provider_shape_without_consuming_a_reply(fake_provider):
    fake_provider.script("kept")
    status, body = post(fake_provider, "/v1/messages", b"{not json", **{"Content-Type": "application/json"})
    assert (status, body["type"], body["error"]["type"]) == (400, "error", "invalid_request_error")
    assert fake_provider.pending() == 1
    assert fake_provider.requests[0].raw == b"{not json"


def test_oversized_body_is_refused_unread_with_413():
    with FakeProvider(max_body_bytes=1000) as fake:
        fake.script("kept")
        big = [{"role": "user", "content": "x" * 2000}]
        with pytest.raises(openai.APIStatusError) as raised:
            openai_client(fake).chat.completions.create(model="m", messages=big)
        assert raised.value.status_code == 413
        assert (fake.requests[0].raw, fake.pending()) == (b"", 1)
        assert chat(fake).choices[0].message.content == "kept"


def test_a_failure_while_answering_is_a_500_and_the_server_keeps_serving(fake_provider):
    fake_provider.script(Reply.tools(("call_1", "f", {"not json": {1, 2}})))
    with pytest.raises(openai.InternalServerError):
        chat(fake_provider)
    assert [type(error) for error in fake_provider.errors] == [TypeError]
    assert chat(fake_provider).choices[0].message.content == "ok"


def test_error_bodies_can_be_given_verbatim(fake_provider):
    fake_provider.script(Reply(error=HttpError(503, "unused", body=b'{"detail": "down"}')))
    with pytest.raises(anthropic.APIStatusError) as raised:
        message(fake_provider)
    assert (raised.value.status_code, raised.value.body) == (503, {"detail": "down"})


def test_binds_only_the_ipv4_loopback_address(fake_provider):
    host, port = fake_provider.address
    assert host == "127.0.0.1"
    assert fake_provider.base_url == f"http://127.0.0.1:{port}"
    assert fake_provider.openai_base_url == f"http://127.0.0.1:{port}/v1"
    assert fake_provider.anthropic_base_url == f"http://127.0.0.1:{port}"
    with pytest.raises(ConnectionRefusedError):  # a wildcard bind would accept on 127.0.0.2 too
        socket.create_connection(("127.0.0.2", port), timeout=1).close()


def test_close_wakes_pending_latency_and_stops_serving():
    fake = FakeProvider().start()
    port = fake.address[1]
    fake.script(Reply(text="slow", latency=30))
    outcome: list[type[BaseException]] = []

    def slow_call() -> None:
        try:
            chat(fake, timeout=5)
        except openai.APIError as exc:
            outcome.append(type(exc))

    caller = threading.Thread(target=slow_call)
    caller.start()
    while not fake.requests:
        time.sleep(0.01)
    started = time.monotonic()
    fake.close()
    caller.join(timeout=5)
    assert time.monotonic() - started < 1
    assert outcome == [openai.APIConnectionError]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_close_ends_idle_keep_alive_connections():
    fake = FakeProvider().start()
    connection = http.client.HTTPConnection(*fake.address, timeout=TIMEOUT)
    connection.request("GET", "/health")
    assert connection.getresponse().read() == b'{"error": {"message": "no route for /health"}}'
    fake.close()
    assert connection.sock.recv(1) == b""  # the server side hung up instead of idling until the timeout
    connection.close()
