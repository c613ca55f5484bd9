"""The adapter base class: what every provider kind implements, and the guarantee that
:meth:`ProviderAdapter.complete` raises :class:`ProviderError` and nothing else.

SDK exceptions, transport errors, undecodable JSON and replies of an unexpected shape are all classified
into a :class:`FailureClass` (see :mod:`providers.failures`), which decides whether the dispatcher
may retry or walk fallbacks. The values an adapter takes and returns are in
:mod:`providers.values`, the deltas of a streamed reply in :mod:`providers.streams`.
"""

from __future__ import annotations

import asyncio
import weakref
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Generic, Protocol, TypeVar

import orjson
from asgiref.sync import sync_to_async

from context_assembly.messages import ToolCall
from providers.failures import FailureClass, ProviderError, SdkErrors, provider_error_from
from providers.streams import (
    AsyncProviderStream,
    ProviderStream,
    StreamDelta,
    StreamFinish,
    deltas_of,
    reply_of,
    threaded_stream,
)
from providers.values import EmbeddingCall, EmbeddingReply, ProviderCall, ProviderConfig, ProviderReply

KEYLESS_PLACEHOLDER = "no-key-configured"


# What the SDKs tell every provider about the host they run on, besides what a call needs: the
# language and SDK version, the operating system, architecture and Python version, whether the
# client is async, an attempt's retry count and timeouts. None of it is the provider's to know (it
# fingerprints the serving host), and each header costs every request its building, copying into the
# transport and sending. Each SDK drops a default header given as its own ``omit`` (the SDKs' public
# way to remove one); the retry count and read timeout of the ``openai`` SDK are dropped per request.
HOST_HEADERS = (
    "X-Stainless-Lang",
    "X-Stainless-Package-Version",
    "X-Stainless-OS",
    "X-Stainless-Arch",
    "X-Stainless-Runtime",
    "X-Stainless-Runtime-Version",
    "X-Stainless-Async",
    "X-Stainless-Retry-Count",
    "X-Stainless-Read-Timeout",
    "X-Stainless-Timeout",
)


def host_headers_omitted(omit: object) -> dict[str, Any]:
    """:data:`HOST_HEADERS`, each as ``omit`` (the SDK's own marker of a header not to send)."""
    return dict.fromkeys(HOST_HEADERS, omit)


def json_sent(body: dict[str, Any]) -> dict[str, Any]:
    """The argument of an SDK's generic ``post`` that sends ``body``: its JSON as ``content``, encoded by
    orjson, or the ``body`` itself (which the SDK encodes) for one that orjson does not encode.

    The SDK encodes a body with the standard library's ``json`` (compact, UTF-8 unescaped), which
    walks a long conversation's text character by character in its escaping loop: about 3% of
    the instructions of a 50-message completion through the gateway. orjson writes the same bytes for
    a body's objects, arrays, strings, integers, booleans and null; a float may be written in another
    form of the same number, and one that is not a number is ``null`` where the SDK's encoder raised
    (a body's numbers come from validated options, which never hold one). A key that is not a string
    or an integer past 64 bits is left to the SDK."""
    try:
        encoded = orjson.dumps(body)
    except orjson.JSONEncodeError:
        return {"body": body}
    # orjson's bytes keep the spare capacity of its buffer (8 KB for a body of a few hundred bytes),
    # and a call holds its body until its answer: a waiting stream held 4 KB more. A copy is exact.
    return {"content": bytes(memoryview(encoded))}


def sdk_client_options(config: ProviderConfig) -> dict[str, Any]:
    """The client arguments both SDKs take alike. An explicit key (a placeholder for a keyless server) also
    stops the SDK from reading its environment and profile credentials; the dispatcher does the retries."""
    return {
        "base_url": config.base_url,
        "api_key": config.api_key or KEYLESS_PLACEHOLDER,
        "timeout": config.timeout_seconds,
        "max_retries": 0,
    }


class ProviderAdapter(ABC):
    """One provider kind. Subclasses implement :meth:`_request_body` (the wire body of a call) and
    :meth:`_send` (send that body once); the public methods guarantee that only :class:`ProviderError`
    escapes. ``sdk_errors`` names the SDK's exception classes (None: no SDK).

    The body is built apart from the sending so that the dispatcher's guard pass
    (:mod:`providers.guard`) reads exactly what will be sent, and so that the retries of one
    target send the same body without rebuilding it.
    """

    sdk_errors: SdkErrors | None = None

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config

    def request_body(self, call: ProviderCall) -> dict[str, Any]:
        """The body this adapter sends for ``call``: JSON values only, every string as it goes on the
        wire. Raises :class:`ProviderError` (e.g. ``client_error`` for a call the API cannot express)."""
        try:
            return self._request_body(call)
        except ProviderError:
            raise
        except Exception as exc:
            raise provider_error_from(exc, provider=self.config.identifier, sdk=self.sdk_errors) from None

    def send(self, call: ProviderCall, body: dict[str, Any]) -> ProviderReply:
        """Send ``body`` once (no retries here: the dispatcher retries). ``body`` is
        :meth:`request_body` of ``call``; both describe the same request (a guard that redacts hands
        over both redacted). Raises :class:`ProviderError`."""
        try:
            return self._send(call, body)
        except ProviderError:
            raise
        except Exception as exc:
            raise provider_error_from(exc, provider=self.config.identifier, sdk=self.sdk_errors) from None

    def complete(self, call: ProviderCall) -> ProviderReply:
        """Build the body of ``call`` and send it once, without a guard pass. Raises :class:`ProviderError`."""
        return self.send(call, self.request_body(call))

    def embed(self, call: EmbeddingCall) -> EmbeddingReply:
        """The vectors of ``call``'s inputs, sent once (the dispatcher retries). An adapter whose
        provider answers no embeddings refuses as ``client_error`` (the catalogue says which models
        embed, so a governed call never gets here for one). Raises :class:`ProviderError`."""
        try:
            return self._embed(call)
        except ProviderError:
            raise
        except Exception as exc:
            raise provider_error_from(exc, provider=self.config.identifier, sdk=self.sdk_errors) from None

    def _embed(self, call: EmbeddingCall) -> EmbeddingReply:
        raise self.error(FailureClass.CLIENT_ERROR, "this provider kind answers no embeddings")

    async def aembed(self, call: EmbeddingCall) -> EmbeddingReply:
        """:meth:`embed` on an event loop, the wait for the provider holding no thread. By default (an
        adapter without an async client) the blocking call runs in a worker thread."""
        return await sync_to_async(self.embed, thread_sensitive=False)(call)

    def stream(self, call: ProviderCall, body: dict[str, Any]) -> ProviderStream:
        """Send ``body`` once and return the open stream of its reply (no retries here). ``call`` must
        ask for a stream (``call.stream``) and ``body`` be :meth:`request_body` of it. Opening raises
        :class:`ProviderError` for anything the provider answers before its first byte of content (a
        refused key, a rate limit, a server error); the stream raises it for what breaks later."""
        if not call.stream:
            raise ValueError("stream() needs a call with stream=True")
        try:
            deltas, close = self._open_stream(call, body)
        except ProviderError:
            raise
        except Exception as exc:
            raise self.classify(exc) from None
        return ProviderStream(deltas, close=close, classify=self.classify)

    async def asend(self, call: ProviderCall, body: dict[str, Any]) -> ProviderReply:
        """:meth:`send` on an event loop, the wait for the provider holding no thread. By default (an
        adapter without an async client) the blocking send runs in a worker thread."""
        return await sync_to_async(self.send, thread_sensitive=False)(call, body)

    async def astream(self, call: ProviderCall, body: dict[str, Any]) -> AsyncProviderStream:
        """:meth:`stream` on an event loop: the request is sent when the stream is first read, and the
        wait for the provider holds no thread. By default (an adapter without an async client) the
        blocking stream is read in a worker thread (``threaded_stream``)."""
        if not call.stream:
            raise ValueError("astream() needs a call with stream=True")
        return threaded_stream(lambda: self.stream(call, body))

    def _open_stream(
        self, call: ProviderCall, body: dict[str, Any]
    ) -> tuple[Iterator[StreamDelta], Callable[[], None]]:
        """The deltas of the reply and how to release its connection. By default the whole reply is
        awaited and then handed over as deltas (an adapter that cannot stream still can be streamed)."""
        return deltas_of(self._send(call, body)), _nothing

    def require_event_stream(self, content_type: str, close: Callable[[], None]) -> None:
        """Refuse a success answer to a stream request that is not an event stream (a server that
        ignored ``stream``, or a proxy's page) as ``malformed``, closing it: read as events it would
        end without a finish and pass for a dropped connection, which is retried."""
        if not content_type.lower().startswith("text/event-stream"):
            close()
            raise self.error(
                FailureClass.MALFORMED, "the stream request was not answered with an event stream"
            )

    def classify(self, exc: Exception) -> ProviderError:
        """``exc`` (raised by the SDK or the transport) as the :class:`ProviderError` it stands for."""
        return provider_error_from(exc, provider=self.config.identifier, sdk=self.sdk_errors)

    @abstractmethod
    def _request_body(self, call: ProviderCall) -> dict[str, Any]: ...

    @abstractmethod
    def _send(self, call: ProviderCall, body: dict[str, Any]) -> ProviderReply: ...

    def close(self) -> None:  # noqa: B027 - optional hook; adapters without resources keep the default
        """Release network resources (connection pools). Idempotent."""

    def error(self, failure_class: FailureClass, problem: str) -> ProviderError:
        """A :class:`ProviderError` raised by the adapter itself (``problem`` must carry no content)."""
        return ProviderError(
            f"provider {self.config.identifier!r}: {problem}",
            failure_class=failure_class,
            provider=self.config.identifier,
        )

    def tool_call(self, call_id: str | None, name: str | None, arguments: str, index: int) -> ToolCall:
        """A validated :class:`ToolCall`; a missing id (some local servers omit it) becomes
        ``call_<index>``, a missing name is a malformed reply."""
        if not name:
            raise self.error(FailureClass.MALFORMED, f"tool call {index} has no function name")
        return ToolCall(id=call_id or f"call_{index}", name=name, arguments=arguments)


def _nothing() -> None:
    return None


class _Closable(Protocol):
    def close(self) -> None: ...


ClientT = TypeVar("ClientT", bound=_Closable)


AsyncClientT = TypeVar("AsyncClientT")


class _StreamReading(Protocol):
    def add(self, event: Any) -> list[StreamDelta]: ...


StateT = TypeVar("StateT", bound=_StreamReading)


class SdkAdapter(ProviderAdapter, Generic[ClientT, AsyncClientT, StateT]):
    """An adapter over a vendor SDK: it opens one client from the configuration (which opens no
    connection), closes it, and sends a call either for one whole reply or as a stream. Streams read on
    an event loop (:meth:`astream`) go through the SDK's async client, one per event loop (its
    connections belong to that loop), opened on first use. Either client's stream is read the same
    way: each event added to a new :meth:`_stream_state`, then :meth:`_finish` on what they said."""

    def __init__(self, config: ProviderConfig) -> None:
        super().__init__(config)
        self._client = self._open(sdk_client_options(config))
        self._async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncClientT] = (
            weakref.WeakKeyDictionary()
        )

    @abstractmethod
    def _open(self, options: dict[str, Any]) -> ClientT: ...

    @abstractmethod
    def _open_async(self, options: dict[str, Any]) -> AsyncClientT: ...

    def async_client(self) -> AsyncClientT:
        """The SDK's async client of the running event loop."""
        loop = asyncio.get_running_loop()
        client = self._async_clients.get(loop)
        if client is None:
            client = self._async_clients[loop] = self._open_async(sdk_client_options(self.config))
        return client

    async def asend(self, call: ProviderCall, body: dict[str, Any]) -> ProviderReply:
        if call.stream:
            raise ValueError("asend() sends a whole call; astream() a streamed one")
        try:
            return await self._send_whole_async(call, body)
        except ProviderError:
            raise
        except Exception as exc:
            raise self.classify(exc) from None

    @abstractmethod
    async def _send_whole_async(self, call: ProviderCall, body: dict[str, Any]) -> ProviderReply:
        """:meth:`_send_whole` through the async client."""

    async def astream(self, call: ProviderCall, body: dict[str, Any]) -> AsyncProviderStream:
        if not call.stream:
            raise ValueError("astream() needs a call with stream=True")
        try:
            deltas, close = await self._open_async_stream(call, body)
        except ProviderError:
            raise
        except Exception as exc:
            raise self.classify(exc) from None
        return AsyncProviderStream(deltas, close=close, classify=self.classify)

    @abstractmethod
    async def _open_async_stream(
        self, call: ProviderCall, body: dict[str, Any]
    ) -> tuple[AsyncIterator[StreamDelta], Callable[[], Awaitable[None]]]:
        """:meth:`_open_stream` through the async client: sends the request, raises for an error
        status, and returns the deltas and how to release the connection."""

    async def require_async_event_stream(
        self, content_type: str, close: Callable[[], Awaitable[None]]
    ) -> None:
        """:meth:`require_event_stream` for a stream opened by the async client."""
        if not content_type.lower().startswith("text/event-stream"):
            await close()
            raise self.error(
                FailureClass.MALFORMED, "the stream request was not answered with an event stream"
            )

    def close(self) -> None:
        self._client.close()

    def _send(self, call: ProviderCall, body: dict[str, Any]) -> ProviderReply:
        if not call.stream:
            return self._send_whole(call, body)
        with self.stream(call, body) as stream:
            return reply_of(stream)

    @abstractmethod
    def _send_whole(self, call: ProviderCall, body: dict[str, Any]) -> ProviderReply: ...

    @abstractmethod
    def _open_stream(
        self, call: ProviderCall, body: dict[str, Any]
    ) -> tuple[Iterator[StreamDelta], Callable[[], None]]: ...

    @abstractmethod
    def _stream_state(self, call: ProviderCall) -> StateT:
        """What the events of one stream of ``call`` have said so far (none yet)."""

    @abstractmethod
    def _finish(self, call: ProviderCall, state: StateT) -> StreamFinish:
        """The whole reply of a stream whose events ended; raises when they ended before its end."""

    def _deltas(self, call: ProviderCall, stream: Any) -> Iterator[StreamDelta]:
        state = self._stream_state(call)
        for event in stream:
            yield from state.add(event)
        yield self._finish(call, state)

    async def _async_deltas(self, call: ProviderCall, stream: Any) -> AsyncIterator[StreamDelta]:
        state = self._stream_state(call)
        async for event in stream:
            for delta in state.add(event):
                yield delta
        yield self._finish(call, state)
