"""One example of an egress property: build the world, exercise a path, collect every receiver, check.

Each example runs inside a savepoint that is rolled back at its end, with the fake provider's
recordings, the captured logs and the cache (throttle counters) reset, and ``GOVERNANCE_ENFORCEMENT``
set to the world's mode. The checks every path shares live here:

* the provider wire: no canary; only markers the call's zone admits (or observed legacy rows under
  ``per_row``); nothing when the decision refuses; no request to a switched-off target;
* stored rows (runs, messages, steps, tool calls, governance events): no canary; events hold no caller
  free text;
* captured logs (the project's loggers at DEBUG): no canary;
* no ``late_redaction`` event (the per-part redaction must have caught everything).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.core.cache import cache
from django.db import connection, transaction
from django.db.models.signals import post_save
from django.test import Client
from django.test.utils import override_settings
from hypothesis import note

from agents.models import AgentRun, AgentStep, RunMessage, ToolCallRecord
from governance.models import GovernanceEvent
from tests.egress import oracle
from tests.egress.build import MISSING_SKILL_ID, Base, Built, build, planted, request_body
from tests.egress.profiles import CI, SEED
from tests.egress.receivers import Received, canary_leaks, html_texts, json_texts, sse_texts, strings
from tests.egress.world import BY_KIND, ReplySpec, World
from tests.fakes.provider_server import Reply, ToolCall, server_error
from tests.product import PRODUCT_PACKAGES

PROJECT_LOGGERS = (
    *PRODUCT_PACKAGES,
    "celery",
    "django.request",
    "django.security",
    "axes",
)
LATE_REDACTION = "late_redaction"
STORED = (AgentRun, RunMessage, AgentStep, ToolCallRecord, GovernanceEvent)


@dataclass
class Example:
    world: World
    base: Base
    built: Built
    http: Client
    capture: Callable[..., Any]
    caplog: Any
    received: list[Received] = field(default_factory=list)
    late: list[str] = field(default_factory=list)
    # How the caller's items may be named in events: by position, ``context[N]`` unless the path says.
    caller_sources: frozenset[str] | None = None

    # --- exercising paths ------------------------------------------------------------------------------

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.built.token}"}

    def api(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        label: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """An API call as the example's client (with extra ``headers``); its response is a receiver
        (``label``), kept as the response's ``received``."""
        call = getattr(self.http, method.lower())
        sent = {**self.headers(), **(headers or {})}
        if method == "GET":
            response = call(path, body or {}, headers=sent)
        else:
            response = call(path, body, content_type="application/json", headers=sent)
        response.received = self.keep_response(label or f"{method} {path}", response)
        return response

    def keep_response(self, label: str, response: Any) -> Received:
        if getattr(response, "streaming", False):
            raw = b"".join(response.streaming_content).decode()
            texts = sse_texts(raw)
        else:
            raw = response.content.decode()
            texts = html_texts(raw) if "html" in response.get("Content-Type", "") else json_texts(raw)
        texts += [f"{key}: {value}" for key, value in response.items()]
        received = Received(f"response {label} ({response.status_code})", texts)
        self.received.append(received)
        return received

    @contextlib.contextmanager
    def tasks(self) -> Iterator[None]:
        """Run the tasks enqueued on commit inside the block (eager, as the default suite runs them)."""
        with self.capture(execute=True):
            yield

    def check_refused_skills_alike(self, method: str, path: str, refused: Any) -> None:
        """A request naming skills the client may not name (disabled, above its zone, no
        ``skills:read``) answers exactly as the same request naming ids that do not exist, ids aside."""
        body = request_body(self.built)
        # Each refused pool skill becomes one unknown id (a repeated one, the same unknown id).
        body["skills"] = [
            self.built.skill_id(n, index)
            if index is None or oracle.skill_visible(self.world, index)
            else MISSING_SKILL_ID + 1000 + index
            for n, index in enumerate(self.world.request_skills)
        ]
        unknown = self.api(method, path, body, label=f"{path} naming unknown skills")
        assert refused.status_code == unknown.status_code == 400
        assert _ids_aside(refused.json()) == _ids_aside(unknown.json())

    def script(self) -> None:
        """Queue the world's provider replies (a failing target first answers a retryable error)."""
        self.base.fake.script(*scripted_replies(self.world))

    # --- what the receivers got ------------------------------------------------------------------------

    def wire(self) -> list[tuple[str, Received]]:
        """Each recorded provider request: the model it named and its bytes."""
        requests = []
        for request in self.base.fake.requests:
            raw = request.raw.decode("utf-8", errors="replace")
            texts = [raw, *strings(request.body), *(f"{k}: {v}" for k, v in request.headers.items())]
            requests.append((str(request.body.get("model", "")), Received(f"wire {request.path}", texts)))
        return requests

    def stored(self) -> list[Received]:
        """Every column of every row of the tables a run and its governance write (read in SQL: the
        tables are small and the ORM would cost more than the rest of a check)."""
        received = []
        with connection.cursor() as cursor:
            for model in STORED:
                cursor.execute(f"SELECT * FROM {connection.ops.quote_name(model._meta.db_table)}")
                values = [value for row in cursor.fetchall() for value in row if isinstance(value, str)]
                received.append(Received(f"stored {model.__name__}", values))
        return received

    def logs(self) -> Received:
        texts = [self.caplog.text]
        for record in self.caplog.records:
            texts += [
                str(record.msg),
                *strings(list(record.args or ()) if isinstance(record.args, tuple) else record.args),
            ]
        return Received("logs", texts)

    # --- the shared checks -----------------------------------------------------------------------------

    def check_wire(self, *, expect_send: bool | None) -> list[tuple[str, Received]]:
        """Markers on the wire are admitted in the call's zone; a switched-off target gets nothing;
        ``expect_send`` False: nothing at all was sent; True: something was."""
        world, wire = self.world, self.wire()
        may = oracle.wire_may_carry(world)
        everything = oracle.parts(world)
        for model, request in wire:
            assert model in self.built.model_ids, (model, self.built.model_ids)
            target = world.targets[self.built.model_ids.index(model)]
            assert target.active, f"a switched-off target was called: {model}"
            beyond = request.markers(everything) - may
            assert not beyond, f"parts beyond the call's zone {oracle.call_zone(world)} on the wire: {beyond}"
        if expect_send is False:
            assert wire == [], "the decision refused, yet something was sent"
        elif expect_send is True:
            assert wire, "nothing was sent"
        self.received += [request for _, request in wire]
        return wire

    def check_events_hold_no_caller_text(self, stored: list[Received]) -> None:
        """No caller free text in any event; a caller item is named by its position only."""
        [events] = [received for received in stored if received.label == "stored GovernanceEvent"]
        found = events.markers(oracle.caller_markers(self.world))
        assert not found, f"governance events hold caller free text: {found}"
        positions = self.caller_sources
        if positions is None:
            positions = frozenset(f"context[{i}]" for i in range(len(self.world.items)))
        named = set(
            GovernanceEvent.objects.filter(source_kind="caller_context").values_list(
                "source_identifier", flat=True
            )
        )
        assert named <= positions, f"caller items named otherwise than by position: {named - positions}"

    def check_everything(self) -> None:
        """No canary at any receiver (wire, responses, stored rows, logs); no late redaction."""
        stored = self.stored()
        receivers = [*self.received, *stored, self.logs()]
        if not any(r.label.startswith("wire") for r in self.received):
            receivers += [request for _, request in self.wire()]
        self.check_events_hold_no_caller_text(stored)
        leaks = canary_leaks(receivers)
        assert leaks == {}, f"canaries leaked: {leaks}"
        assert self.late == [], f"a late_redaction event was recorded: {self.late}"


def _ids_aside(body: Any) -> str:
    return re.sub(r"\d+", "#", json.dumps(body, sort_keys=True))


def scripted_replies(world: World) -> list[Reply]:
    """The world's replies in wire form. When the first active target fails, it answers one
    retryable error first (so the next target serves)."""
    replies: list[Reply] = []
    for index, spec in enumerate(world.replies):
        text = planted("Here is my answer", oracle.marker(oracle.REPLY, index), spec.text_canary)
        # Every reply repeats what it was sent: the answer is derived content (a model asked to
        # "repeat everything above verbatim" that obliges).
        replies.append(Reply(text=text, tool_calls=_tool_calls(world, index, spec), echo=True))
    active = [target for target in world.targets if target.active]
    return [server_error(), *replies] if active and active[0].fails else replies


def _tool_calls(world: World, index: int, spec: ReplySpec) -> tuple[ToolCall, ...]:
    if spec.tool is None:
        return ()
    name, arguments = spec.tool, {"tags": [spec.argument]}
    if spec.tool == "load_skill":
        arguments = {"name": spec.argument}
    elif spec.tool == "unknown":
        name = "fetch_everything"
    elif spec.tool == "canary":
        name, arguments = BY_KIND[spec.argument].value, {}
    if spec.argument_canary is not None:
        arguments["note"] = BY_KIND[spec.argument_canary].context
    return (ToolCall(f"call_{index}", name, arguments),)


@dataclass
class Egress:
    """The harness of one test function: its shared rows and one started fake provider."""

    base: Base
    capture: Callable[..., Any]
    caplog: Any
    http: Client = field(default_factory=Client)
    logged_in: bool = False

    @contextlib.contextmanager
    def example(self, world: World, *, staff: bool = False) -> Iterator[Example]:
        note(f"egress seed {SEED}" + (" (derandomized)" if CI else f"; replay with EGRESS_SEED={SEED}"))
        note(repr(world))
        self.base.fake.reset()
        self.caplog.clear()
        cache.clear()
        late: list[str] = []

        def seen(sender: type, instance: GovernanceEvent, created: bool, **kwargs: object) -> None:
            if created and instance.decision == LATE_REDACTION:
                late.append(instance.reason)

        post_save.connect(seen, sender=GovernanceEvent, weak=False)
        try:
            if staff and not self.logged_in:  # once per test function, outside the examples' savepoints
                self.http.force_login(self.base.staff)
                self.logged_in = True
            with override_settings(GOVERNANCE_ENFORCEMENT=world.mode), transaction.atomic():
                example = Example(
                    world, self.base, build(world, self.base), self.http, self.capture, self.caplog
                )
                example.late = late
                yield example
                transaction.set_rollback(True)
        finally:
            post_save.disconnect(seen, sender=GovernanceEvent)


def capture_logs(caplog: Any) -> None:
    caplog.set_level(logging.INFO)
    for name in PROJECT_LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
