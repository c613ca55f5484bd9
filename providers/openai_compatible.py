"""OpenAI Chat Completions and every server that speaks it, through the official ``openai`` SDK.

``base_url`` must include the API version prefix, as the SDK expects: ``https://api.openai.com/v1``,
Ollama ``http://localhost:11434/v1``, vLLM and llama.cpp ``http://host:8000/v1``, OpenRouter
``https://openrouter.ai/api/v1``, Azure's OpenAI-compatible ``https://<resource>.openai.azure.com/openai/v1``.

Wire choices:

* The SDK's own retries are off (``max_retries=0``): the dispatcher retries, so each failure is
  classified once and the backoff is ours.
* The body follows the call's :class:`~context_assembly.profiles.ModelCapabilities`, never the model's
  name: the reply limit goes under ``capabilities.token_parameter`` (``max_tokens`` by default, which
  most compatible servers such as vLLM, llama.cpp, Ollama and OpenRouter require;
  ``max_completion_tokens`` for OpenAI's reasoning models, which refuse ``max_tokens``); sampling
  parameters are left out when ``capabilities.sampling`` is False (the API would answer 400, a
  non-retryable failure that would also stop the fallbacks); system messages take
  ``capabilities.system_role`` (``developer`` for models that replaced the system role).
* Streams always ask for usage (``stream_options={"include_usage": true}``); a stream that ends
  without the usage chunk yields :meth:`Usage.unavailable`, never zeros. Chunks are read as
  leniently as the SDK reads them: the minimal chunks of self-hosted servers (no ``id``, ``model``,
  ``index`` or ``finish_reason``), usage-only chunks with ``choices: []``, and a body without
  ``[DONE]`` are all a complete stream (see ``_StreamState`` and ``_finish``). A stream is read chunk by
  chunk and handed on as typed deltas (:class:`~providers.streams.StreamDelta`): text pieces,
  tool-call pieces (id and name with the first piece of each call), the usage, then the finish.
* A keyless local server still gets a placeholder key, because the SDK refuses to start without one and
  would otherwise read ``OPENAI_API_KEY`` from the environment.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import openai
from openai.types import CreateEmbeddingResponse
from openai.types.chat import ChatCompletion

from context_assembly.messages import Message, ToolCall
from providers.base import SdkAdapter, host_headers_omitted, json_sent
from providers.chat_body import openai_options
from providers.failures import FailureClass, ProviderError, SdkErrors
from providers.kept_alive import kept_alive
from providers.streams import StreamDelta, StreamFinish, TextDelta, ToolCallDelta, UsageDelta
from providers.values import EmbeddingCall, EmbeddingReply, FinishReason, ProviderCall, ProviderReply, Usage

_FINISH_REASONS: dict[str | None, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}


def finish_reason(raw: str | None) -> FinishReason:
    return _FINISH_REASONS.get(raw, "other")


def normalise_usage(raw: object) -> Usage:
    """A reply's or a stream's ``usage`` object, from its decoded JSON (None: unavailable), read as the
    SDK's model of it reads when built without validation: a missing figure is None. OpenAI's
    ``prompt_tokens`` already includes cached tokens; ``cached_tokens`` is None when the server does not
    report the details (many compatible servers do not). Building the SDK's ``CompletionUsage`` for it
    cost about 40 us a reply (its check of the model's configuration against a runtime protocol)."""
    if raw is None:
        return Usage.unavailable()
    usage = _json_object(raw, "usage")
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage.reported(usage.get("prompt_tokens"), cached, usage.get("completion_tokens"))


def _wire_message(message: Message, system_role: str) -> dict[str, Any]:
    wire = message.to_openai()
    if message.role == "system":
        wire["role"] = system_role
    return wire


@dataclass(slots=True)
class _ToolCallDraft:
    position: int = 0
    id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _StreamState:
    """What the chunks of one stream have said so far; :meth:`add` returns what a chunk adds.

    A chunk is its decoded JSON, read as leniently as the SDK's own stream reads it (it builds its
    ``ChatCompletionChunk`` without validation), because several self-hosted servers send no more than
    ``{"choices": [{"delta": {"content": "x"}}]}``: ``id``, ``model``, ``object``, ``created``, a
    choice's ``index`` (the one choice we ask for) and ``finish_reason`` may be missing or null, and so
    may a choice's ``delta`` (a closing chunk that only names its finish reason). What the reply cannot
    be read without is still required: ``choices`` (a list, ``[]`` in a usage-only chunk, or null) and
    a tool-call piece's ``index``; its absence raises ``KeyError``, and a part that must be an object
    and is not raises ``ValueError`` (both classified ``malformed``). Building the SDK's model for
    every chunk cost more than everything else the stream's reader does."""

    response_id: str = ""
    model_id: str = ""
    text: list[str] = field(default_factory=list)
    calls: dict[int, _ToolCallDraft] = field(default_factory=dict)
    finish: str | None = None
    usage: Usage | None = None
    refused: bool = False

    def add(self, raw: object) -> list[StreamDelta]:
        chunk = _json_object(raw, "chunk")
        self.response_id = _string(chunk.get("id")) or self.response_id
        self.model_id = _string(chunk.get("model")) or self.model_id
        deltas: list[StreamDelta] = []
        for raw_choice in chunk["choices"] or ():
            choice = _json_object(raw_choice, "choice")
            if choice.get("index") not in (0, None):
                continue  # we never ask for n > 1
            self.finish = _string(choice.get("finish_reason")) or self.finish
            deltas += self._add_delta(choice.get("delta"))
        usage = chunk.get("usage")
        if usage is not None:
            self.usage = normalise_usage(usage)
            deltas.append(UsageDelta(self.usage))
        return deltas

    def _add_delta(self, raw: object) -> list[StreamDelta]:
        if raw is None:
            return []
        delta = _json_object(raw, "delta")
        deltas: list[StreamDelta] = []
        content = delta.get("content")
        if content:
            self.text.append(content)
            deltas.append(TextDelta(content))
        if delta.get("refusal"):
            self.refused = True
        for raw_piece in delta.get("tool_calls") or ():
            piece = _json_object(raw_piece, "tool call")
            index = piece["index"]
            opening = index not in self.calls
            draft = self.calls.setdefault(index, _ToolCallDraft(position=len(self.calls)))
            draft.id = piece.get("id") or draft.id
            function = piece.get("function")
            function = _json_object(function, "function") if function is not None else None
            name = function.get("name") if function is not None else None
            arguments = (function.get("arguments") or "") if function is not None else ""
            draft.name = name or draft.name
            draft.arguments.append(arguments)
            if opening or arguments:
                first = opening
                deltas.append(
                    ToolCallDelta(
                        draft.position, draft.id if first else None, draft.name if first else None, arguments
                    )
                )
        return deltas


# The SDK's headers about the host, not sent (providers/base.py, HOST_HEADERS): its defaults at the
# client, its retry count and read timeout with each request.
_NO_HOST_HEADERS = host_headers_omitted(openai.omit)
_SENT: Any = {"headers": _NO_HOST_HEADERS}


def _streamed(body: dict[str, Any]) -> dict[str, Any]:
    """The arguments of the client's generic ``post`` (with a ``stream_cls``) that send what
    chat.completions.create(stream=True) sends, without its TypedDict transform of the body (see
    _send_whole): the same path and auth. The stream yields each chunk's decoded JSON, which
    _StreamState reads (``object``: the SDK builds no model of it). It sends the request and raises
    for an error status (or an error event) as create() does."""
    return {
        "path": "/chat/completions",
        **json_sent(body),
        "cast_to": ChatCompletion,
        "options": {**_SENT, "security": {"bearer_auth": True}},
        "stream": True,
    }


def _string(value: object) -> str:
    """``value`` if it is a string; a value of another type reads as absent (an empty string)."""
    return value if isinstance(value, str) else ""


def _json_object(value: object, what: str) -> dict[str, Any]:
    """``value`` if it is a JSON object; else the stream is malformed (a ``ValueError`` is classified so)."""
    if not isinstance(value, dict):
        raise ValueError(f"a stream's {what} is not a JSON object")
    return value


class OpenAICompatibleAdapter(SdkAdapter[openai.OpenAI, openai.AsyncOpenAI, _StreamState]):
    """Chat Completions over the ``openai`` SDK. Construction opens no connection."""

    sdk_errors = SdkErrors.of(openai)

    def _open(self, options: dict[str, Any]) -> openai.OpenAI:
        # The SDK's own client, whose streams keep their connection (providers.kept_alive).
        http_client = openai.DefaultHttpxClient(event_hooks={"response": [kept_alive]})
        return openai.OpenAI(**options, default_headers=_NO_HOST_HEADERS, http_client=http_client)

    def _open_async(self, options: dict[str, Any]) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            **options, default_headers=_NO_HOST_HEADERS, http_client=openai.DefaultAioHttpClient()
        )

    def _request_body(self, call: ProviderCall) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` for ``call`` (the wire body)."""
        capabilities = call.capabilities
        body: dict[str, Any] = {
            "model": call.model_id,
            "messages": [_wire_message(message, capabilities.system_role) for message in call.messages],
            capabilities.token_parameter: call.max_tokens,
        }
        if call.tool_specs:
            body["tools"] = [spec.to_openai() for spec in call.tool_specs]
        if call.temperature is not None and capabilities.sampling:
            body["temperature"] = call.temperature
        body.update(openai_options(call.options, sampling=capabilities.sampling, tools=bool(call.tool_specs)))
        if call.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def _send_whole(self, call: ProviderCall, body: dict[str, Any]) -> ProviderReply:
        # The body is already in wire shape (Message.to_openai); the SDK's generic post sends it as is.
        # chat.completions.create would first walk every message through its TypedDict transform,
        # which costs ~0.5 ms per message: 100 ms per call at a 200-message transcript. The answer is
        # its decoded JSON (``object``), read by _reply as a stream's chunks are read.
        return self._reply(
            call, self._client.post("/chat/completions", **json_sent(body), cast_to=object, options=_SENT)
        )

    async def _send_whole_async(self, call: ProviderCall, body: dict[str, Any]) -> ProviderReply:
        completion = await self.async_client().post(
            "/chat/completions", **json_sent(body), cast_to=object, options=_SENT
        )
        return self._reply(call, completion)

    def _embed(self, call: EmbeddingCall) -> EmbeddingReply:
        """``POST /embeddings`` with floats asked for; the vectors put back in the inputs' order (a
        server may answer them in any order, each with its ``index``)."""
        return self._embedding_reply(
            call,
            self._client.post(
                "/embeddings", body=call.body(), cast_to=CreateEmbeddingResponse, options=_SENT
            ),
        )

    async def aembed(self, call: EmbeddingCall) -> EmbeddingReply:
        """:meth:`embed` through the async client of the running loop."""
        try:
            answer = await self.async_client().post(
                "/embeddings", body=call.body(), cast_to=CreateEmbeddingResponse, options=_SENT
            )
            return self._embedding_reply(call, answer)
        except ProviderError:
            raise
        except Exception as exc:
            raise self.classify(exc) from None

    def _embedding_reply(self, call: EmbeddingCall, answer: CreateEmbeddingResponse) -> EmbeddingReply:
        by_index = {item.index: tuple(float(x) for x in item.embedding) for item in answer.data}
        if sorted(by_index) != list(range(len(call.inputs))):
            raise self.error(FailureClass.MALFORMED, "the reply does not hold one vector per input")
        usage = answer.usage
        return EmbeddingReply(
            vectors=tuple(by_index[index] for index in range(len(call.inputs))),
            usage=Usage.reported(usage.prompt_tokens, None, 0) if usage is not None else Usage.unavailable(),
            model_id=answer.model or call.model_id,
        )

    def _reply(self, call: ProviderCall, raw: object) -> ProviderReply:
        """A whole reply from its decoded JSON, read as leniently as the SDK's own model of it (built
        without validation) and as a stream's chunks are read (:class:`_StreamState`): what the reply
        cannot be read without is required (its first choice, that choice's ``message``, a tool call's
        ``function`` and its ``name``): a missing one is ``malformed`` (``KeyError``, or the adapter's
        own error for a name), as is a part that must be an object and is not (``ValueError``). A tool
        call without an ``id`` gets ``call_<index>``, as in a stream. Building the SDK's
        ``ChatCompletion`` for it cost more than reading it."""
        completion = _json_object(raw, "reply")
        choices = completion.get("choices")
        if not choices:
            raise self.error(FailureClass.MALFORMED, "the reply has no choices")
        choice = _json_object(choices[0], "choice")
        message = _json_object(choice["message"], "message")
        calls = tuple(self._tool_calls(message.get("tool_calls") or ()))
        usage = completion.get("usage")
        # A refusal arrives with finish_reason "stop"; report it as Anthropic's refusal is reported.
        refused = bool(message.get("refusal"))
        return ProviderReply(
            text=_string(message.get("content")),
            tool_calls=calls,
            finish_reason="content_filter" if refused else finish_reason(choice.get("finish_reason")),
            usage=normalise_usage(usage),
            model_id=_string(completion.get("model")) or call.model_id,
            response_id=_string(completion.get("id")),
        )

    def _tool_calls(self, raw_calls: Iterable[Any]) -> Iterator[ToolCall]:
        """A whole reply's function calls (a call of another type is not one we offered)."""
        for index, item in enumerate(raw_calls):
            raw_call = _json_object(item, "tool call")
            if raw_call.get("type", "function") != "function":
                continue
            function = _json_object(raw_call["function"], "function")
            arguments = _string(function.get("arguments"))
            yield self.tool_call(_string(raw_call.get("id")), _string(function.get("name")), arguments, index)

    def _open_stream(
        self, call: ProviderCall, body: dict[str, Any]
    ) -> tuple[Iterator[StreamDelta], Callable[[], None]]:
        stream: openai.Stream[object] = self._client.post(**_streamed(body), stream_cls=openai.Stream[object])
        self.require_event_stream(stream.response.headers.get("content-type", ""), stream.close)
        return self._deltas(call, stream), stream.close

    async def _open_async_stream(
        self, call: ProviderCall, body: dict[str, Any]
    ) -> tuple[AsyncIterator[StreamDelta], Callable[[], Awaitable[None]]]:
        # _open_stream through the async client: the same request, read by the same _StreamState.
        stream: openai.AsyncStream[object] = await self.async_client().post(
            **_streamed(body), stream_cls=openai.AsyncStream[object]
        )
        await self.require_async_event_stream(stream.response.headers.get("content-type", ""), stream.close)
        return self._async_deltas(call, stream), stream.close

    def _stream_state(self, call: ProviderCall) -> _StreamState:
        return _StreamState()

    def _finish(self, call: ProviderCall, state: _StreamState) -> StreamFinish:
        """The whole reply of a body that ended in order (the transport raises for one cut short).

        A stream is complete when a chunk named its finish reason, or, from a server that names none,
        when its usage chunk arrived: the usage we always ask for comes after the last choice chunk.
        ``[DONE]`` is not required (the SDK does not require it either). A body that ended with
        neither is as incomplete as a dropped connection (a proxy that closed it in order)."""
        if state.finish is None and state.usage is None:
            raise self.error(FailureClass.CONNECTION, "the stream ended without a finish reason or usage")
        finished = state.finish or ("tool_calls" if state.calls else "stop")
        return StreamFinish(
            ProviderReply(
                text="".join(state.text),
                tool_calls=self._stream_calls(state),
                finish_reason="content_filter" if state.refused else finish_reason(finished),
                usage=state.usage if state.usage is not None else Usage.unavailable(),
                model_id=state.model_id or call.model_id,
                response_id=state.response_id,
            )
        )

    def _stream_calls(self, state: _StreamState) -> tuple[ToolCall, ...]:
        return tuple(
            self.tool_call(draft.id, draft.name, "".join(draft.arguments), position)
            for position, (_, draft) in enumerate(sorted(state.calls.items()))
        )
