"""A streamed call's connection goes back to the pool.

The ``openai`` SDK stops reading a stream at its ``data: [DONE]`` event and closes the response. Over
HTTP/1.1 the body's terminating chunk is then still unread, and the connection pool closes a
connection whose response was not read to its end: every streamed call through the synchronous client
opened a new connection (against a real provider, a new TCP and TLS handshake), while whole calls and
the async client (whose aiohttp transport reads to the end) kept theirs. The SDK's maintainers would
rather see this handled below the stream, in the transport (openai-python #3440). :func:`kept_alive`
does it just above the transport: a response hook of the SDK's own client (``event_hooks``, httpx's
public interface), so the client still chooses its transport, its limits and its environment's proxies.

Closing a response whose last event was ``[DONE]`` first reads what is left of its body: at most
:data:`DRAIN_BYTES`, for at most :data:`DRAIN_SECONDS`. A server that keeps the body open after
``[DONE]`` has the connection shut when the time is up, and the connection is not reused, which is
what happened to every streamed call before. A response closed before ``[DONE]`` (a stream cut
short by its reader) is closed at once, as before: its provider may still be generating.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx2

DRAIN_BYTES = 64 * 1024
DRAIN_SECONDS = 0.25
_DONE = b"data: [DONE]"
_TAIL = 32  # bytes of the body kept to recognise its last event, which may span two chunks


class _DrainedAfterDone(httpx2.SyncByteStream):
    """A streamed body that, closed after its ``[DONE]`` event, reads the rest of itself first."""

    __slots__ = ("_chunks", "_ended", "_network", "_stream", "_tail")

    def __init__(self, stream: httpx2.SyncByteStream, network: Any) -> None:
        self._stream = stream
        self._network = network
        self._chunks: Iterator[bytes] | None = None
        self._tail = b""
        self._ended = False

    def __iter__(self) -> Iterator[bytes]:
        self._chunks = chunks = iter(self._stream)
        for chunk in chunks:
            self._tail = (self._tail + chunk)[-_TAIL:]
            yield chunk
        self._ended = True

    @property
    def elapsed(self) -> Any:  # the response's ``elapsed`` reads it from its stream
        return getattr(self._stream, "elapsed", None)

    def close(self) -> None:
        try:
            if self._chunks is not None and not self._ended and self._tail.rstrip().endswith(_DONE):
                self._drain(self._chunks)
        finally:
            self._stream.close()

    def _drain(self, chunks: Iterator[bytes]) -> None:
        sock = self._network.get_extra_info("socket") if self._network is not None else None
        if sock is None:
            return
        watch = _WATCHDOG.watch(sock)
        try:
            read = 0
            for chunk in chunks:
                read += len(chunk)
                if read > DRAIN_BYTES:
                    return
            self._ended = True
        except httpx2.HTTPError:
            pass  # shut by the watchdog, or the server broke off: the connection is closed, not reused
        finally:
            _WATCHDOG.release(watch)


class _Watchdog:
    """One thread for the process that shuts the sockets of drains past their time: a thread of its own
    per drain (``threading.Timer``) cost more than the new connection it saved."""

    def __init__(self) -> None:
        self.start_afresh()

    def start_afresh(self) -> None:
        """No thread and nothing watched: at construction, and in a forked child, which has neither
        its parent's thread nor, should another thread have held it then, a usable lock."""
        self._lock = threading.Lock()
        self._due: dict[int, tuple[float, socket.socket]] = {}
        self._keys = itertools.count()
        self._pending = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, sock: socket.socket) -> int:
        key = next(self._keys)
        with self._lock:
            self._due[key] = (time.monotonic() + DRAIN_SECONDS, sock)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="stream-drain-watchdog", daemon=True)
                self._thread.start()
        self._pending.set()
        return key

    def release(self, key: int) -> None:
        with self._lock:
            self._due.pop(key, None)

    def _run(self) -> None:
        while True:
            self._pending.wait()
            time.sleep(DRAIN_SECONDS / 5)
            now = time.monotonic()
            # Shut under the lock: a drain releases its socket before its connection goes back to
            # the pool, so no socket is shut once another call may have taken its connection.
            with self._lock:
                for key in [key for key, (due, _) in self._due.items() if due <= now]:
                    with contextlib.suppress(OSError):  # closed meanwhile
                        self._due.pop(key)[1].shutdown(socket.SHUT_RDWR)
                if not self._due:
                    self._pending.clear()


_WATCHDOG = _Watchdog()
os.register_at_fork(after_in_child=_WATCHDOG.start_afresh)


def kept_alive(response: httpx2.Response) -> None:
    """A blocking client's response hook (``event_hooks={"response": [kept_alive]}``): an event stream's
    body reads its end when it is closed after ``[DONE]`` (see the module)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        stream = response.stream
        assert isinstance(stream, httpx2.SyncByteStream)  # a blocking client's body
        response.stream = _DrainedAfterDone(stream, response.extensions.get("network_stream"))
