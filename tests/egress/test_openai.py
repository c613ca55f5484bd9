"""Egress of ``/api/openai/v1/chat/completions``: the provider wire, the answer (a body or a stream of
chunks), the stored rows and the logs, for conversations in every shape OpenAI's clients send.

The world's caller items become messages of every role around the task input (the first ``user``
message): leading ``system`` and ``developer`` messages, later ``user`` and ``assistant`` turns, later
``system`` messages, and tool exchanges (an assistant's ``tool_calls``, their function names and
arguments, and the ``tool`` results answering them), each with the item's class as its ``data_class``
(or, for the task input, the ``X-Data-Class`` header). Names and tool-call arguments carry the item's
name canary, tool-call names a canary whose bare value is recognisable (as a model may name a call);
texts and tool results carry the item's text canary. The request may offer a client
tool whose description carries a canary. The same checks as the native paths apply.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.egress import oracle
from tests.egress.build import CONFIGURATION, planted, with_canary
from tests.egress.profiles import egress_settings
from tests.egress.world import BY_KIND, NAME_KINDS, World, short_canaries, worlds

pytestmark = pytest.mark.django_db

CHAT = "/api/openai/v1/chat/completions"
STATUS = {
    "refused": (403, "context_refused"),
    "inactive": (409, "model_inactive"),
    "failed": (502, "provider_error"),
}
LEADING_ROLES = ("system", "developer")
LATER_ROLES = ("user", "assistant", "tool_exchange", "system", "developer")


@dataclass(frozen=True)
class Shape:
    """How the world's request is sent: how many items lead (before the task input), each later
    item's role, whether the task input's class comes in the header, a client tool's canary (or no
    tool), and whether the answer streams."""

    leading: int
    leading_roles: tuple[str, ...]
    later_roles: tuple[str, ...]
    class_in_header: bool
    tool_canary: str | bool | None  # False: no tools offered
    call_name_canary: str | None  # a canary whose bare value names the tool exchanges' calls
    stream: bool
    include_usage: bool


@st.composite
def shapes(draw: st.DrawFn, world: World) -> Shape:
    count = len(world.items)
    leading = draw(st.integers(0, count))
    return Shape(
        leading=leading,
        leading_roles=tuple(draw(st.sampled_from(LEADING_ROLES)) for _ in range(leading)),
        later_roles=tuple(draw(st.sampled_from(LATER_ROLES)) for _ in range(count - leading)),
        class_in_header=draw(st.booleans()),
        tool_canary=draw(st.sampled_from((False, False)) | short_canaries),
        call_name_canary=draw(st.sampled_from((None, *NAME_KINDS))),
        stream=draw(st.booleans()),
        include_usage=draw(st.booleans()),
    )


@st.composite
def requests(draw: st.DrawFn) -> tuple[World, Shape]:
    # A chat completion names no skills: the request's skills are the native API's.
    world = replace(draw(worlds(max_replies=1)), request_skills=())
    return world, draw(shapes(world))


@egress_settings("openai")
@given(request=requests())
def test_a_chat_completion_sends_only_what_the_zone_admits_and_answers_no_secret(egress, request):
    world, shape = request
    with egress.example(world) as example:
        example.script()
        body, headers, task_index = chat_request(world, shape)
        # The caller's items are named by position, its tools as a whole.
        named = {f"messages[{i}]" for i in range(len(body["messages"])) if i != task_index}
        example.caller_sources = frozenset(named | ({"tools"} if "tools" in body else set()))
        response = example.api("POST", CHAT, body, label="chat completion", headers=headers)
        outcome = _check_status(world, shape, response)
        example.check_wire(expect_send=outcome in ("served", "failed"))
        beyond = response.received.markers() - oracle.answer_may_hold(world)
        assert not beyond, f"the chat completion's answer holds parts above the client's zone: {beyond}"
        example.check_everything()


def chat_request(world: World, shape: Shape) -> tuple[dict[str, Any], dict[str, str], int]:
    """The body, the extra headers and the task input's position of the world's request."""
    header_class = shape.class_in_header and world.input_class is not None
    messages: list[dict[str, Any]] = []
    for i in range(shape.leading):
        messages.append(_message(world, i, shape.leading_roles[i], header_class))
    task_index = len(messages)
    task: dict[str, Any] = {
        "role": "user",
        "content": planted("Please help with", oracle.marker(oracle.TASK_INPUT), world.input_canary),
    }
    if world.input_class is not None and not header_class:
        task["data_class"] = world.input_class
    messages.append(task)
    for n, role in enumerate(shape.later_roles):
        i = shape.leading + n
        if role == "tool_exchange":
            messages += _tool_exchange(world, i, header_class, shape.call_name_canary)
        else:
            messages.append(_message(world, i, role, header_class))
    body: dict[str, Any] = {"model": CONFIGURATION, "messages": messages}
    # The caller's tools are of the request's default class: offered only when that is the task input's.
    if shape.tool_canary is not False and (world.input_class is None or header_class):
        description = with_canary("Looks things up.", shape.tool_canary or None, sep=" ")
        function = {"name": "look_up", "description": description, "parameters": {"type": "object"}}
        body["tools"] = [{"type": "function", "function": function}]
    if shape.stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": shape.include_usage}
    headers = {"X-Data-Class": world.input_class} if header_class else {}
    return body, headers, task_index


def _item_text(world: World, i: int, lead: str = "Context") -> str:
    return planted(lead, oracle.marker(oracle.ITEM_TEXT, i), world.items[i].text_canary)


def _item_name(world: World, i: int) -> str:
    return with_canary(f"brief {oracle.marker(oracle.ITEM_NAME, i)}", world.items[i].name_canary, sep=" ")


def _classed(message: dict[str, Any], world: World, i: int, header_class: bool) -> dict[str, Any]:
    """Every caller item declares its class, except when the header gives the task input's and the
    item's is the same (then the header's applies to it)."""
    data_class = world.items[i].data_class
    if not (header_class and data_class == world.input_class):
        message["data_class"] = data_class
    return message


def _message(world: World, i: int, role: str, header_class: bool) -> dict[str, Any]:
    text = _item_text(world, i)
    content: Any = text if i % 2 == 0 else [{"type": "text", "text": text}]
    message = {"role": role, "content": content, "name": _item_name(world, i)}
    return _classed(message, world, i, header_class)


def _tool_exchange(world: World, i: int, header_class: bool, name_canary: str | None) -> list[dict[str, Any]]:
    """An assistant's tool call (its arguments carry the item's name and text; its name a marker, or
    a canary whose bare value is recognisable) and the tool result answering it (the item's text)."""
    call_id = f"call_item_{i}"
    arguments = json.dumps({"about": _item_name(world, i), "note": _item_text(world, i, "Asked")})
    function_name = oracle.marker(oracle.ITEM_NAME, i) if name_canary is None else BY_KIND[name_canary].value
    call = {"id": call_id, "type": "function", "function": {"name": function_name, "arguments": arguments}}
    assistant = {"role": "assistant", "content": None, "tool_calls": [call]}
    result = {"role": "tool", "tool_call_id": call_id, "content": _item_text(world, i, "Result")}
    return [_classed(assistant, world, i, header_class), _classed(result, world, i, header_class)]


def _check_status(world: World, shape: Shape, response: Any) -> str | None:
    if "configurations:use" not in world.client_scopes:
        assert response.status_code == 403, response.content
        assert response.json()["error"]["code"] == "permission_denied"
        return None
    outcomes = oracle.send_outcomes(world)
    got = "served" if response.status_code == 200 else None
    if got is None:
        error = response.json()["error"]
        for outcome, (status, code) in STATUS.items():
            if (response.status_code, error.get("code")) == (status, code):
                got = outcome
    assert got in outcomes, (outcomes, response.status_code, response.content)
    if got == "served" and shape.stream:
        assert response.get("Content-Type", "").startswith("text/event-stream")
    return got
