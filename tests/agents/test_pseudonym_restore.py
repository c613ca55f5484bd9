"""Restoring placeholders (agents/runtime/pseudonyms.py): the same value always gets the same
placeholder under one key and another under another key; a reply's placeholders come back as the
values for a receiver that may see them, whole, streamed with the deltas split at every position
(text and tool-call arguments, the latter as valid JSON), and never for one that may not; the mapping
cannot be printed or pickled."""

from __future__ import annotations

import json
import pickle
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.runtime.outcome import Answered
from agents.runtime.pseudonyms import PLACEHOLDER, Pseudonyms, StreamRestorer, run_key
from agents.runtime.streaming import GovernedStream
from context_assembly.messages import ToolCall
from governance.guardrails.personal_data import OperatorPattern, find_personal_data
from governance.vocabulary import Provenance
from providers.failures import ProviderError
from providers.streams import ProviderStream, StreamFinish, TextDelta, ToolCallDelta
from providers.values import ProviderReply, Usage
from tests.personal_data_corpus import labelled_corpus

SENTENCES = labelled_corpus(seed=40, per_kind=1)
TEXT = " ".join(item.text for item in SENTENCES)
VALUES = [item.value for item in SENTENCES]


def pseudonymized(
    text: str = TEXT, *, key: bytes = b"k" * 32, restorable: bool = True
) -> tuple[Pseudonyms, str]:
    pseudonyms = Pseudonyms(key)
    return pseudonyms, pseudonyms.replaced(text, find_personal_data(text), restorable=restorable)


def test_every_value_is_replaced_by_a_placeholder_and_restored():
    pseudonyms, sent = pseudonymized()

    assert not any(value in sent for value in VALUES)
    assert len(PLACEHOLDER.findall(sent)) == len(VALUES)
    assert pseudonyms.restore(sent) == TEXT


def test_the_same_value_gets_the_same_placeholder_under_one_key_only():
    text = f"{SENTENCES[0].text} then {SENTENCES[0].value} again"
    _, first = pseudonymized(text, key=run_key("run-a"))
    _, again = pseudonymized(text, key=run_key("run-a"))
    _, other = pseudonymized(text, key=run_key("run-b"))

    placeholders = PLACEHOLDER.findall(first)
    assert len(placeholders) == 2 and len(set(placeholders)) == 1
    assert first == again
    assert set(PLACEHOLDER.findall(other)).isdisjoint(placeholders)


def test_a_placeholder_the_receiver_may_not_see_stays():
    pseudonyms, sent = pseudonymized(restorable=False)

    assert pseudonyms.restore(sent) == sent


def test_the_mapping_is_never_printed_nor_serialised():
    pseudonyms, _ = pseudonymized()

    assert not any(value in repr(pseudonyms) for value in VALUES)
    with pytest.raises(TypeError):
        pickle.dumps(pseudonyms)


def test_restored_json_arguments_stay_valid_json():
    pseudonyms = Pseudonyms(b"k" * 32)
    text = 'Account O"Neil\\7 is closed'  # a value (an operator's pattern) with a quote and a backslash
    pattern = OperatorPattern("account", re.compile(r'O"Neil\\[0-9]'))
    custom = pseudonyms.replaced(text, find_personal_data(text, extra_patterns=[pattern]), restorable=True)
    assert custom != text
    arguments = json.dumps({"to": custom})

    assert json.loads(pseudonyms.restore(arguments, json_text=True)) == {"to": text}


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_stream_split_at_any_positions_restores_every_placeholder(data):
    pseudonyms, sent = pseudonymized()
    cuts = sorted(data.draw(st.sets(st.integers(1, len(sent) - 1), max_size=40)))
    pieces = [sent[a:b] for a, b in zip([0, *cuts], [*cuts, len(sent)], strict=True)]
    restorer = StreamRestorer(pseudonyms)

    out = [restorer.feed(piece) for piece in pieces] + [restorer.finish()]

    assert "".join(out) == TEXT
    assert not any(PLACEHOLDER.search(piece) for piece in out)


def _stream(deltas: list) -> ProviderStream:
    return ProviderStream(
        iter(deltas), close=lambda: None, classify=lambda exc: ProviderError("x", retryable=False)
    )


@pytest.mark.parametrize("where", ["text", "arguments"])
def test_a_governed_stream_restores_a_placeholder_split_at_every_position(where):
    pseudonyms, sent = pseudonymized(SENTENCES[0].text)
    placeholder = PLACEHOLDER.search(sent).group(0)
    start = sent.index(placeholder)
    whole = json.dumps({"note": sent}) if where == "arguments" else sent
    expected = json.dumps({"note": SENTENCES[0].text}) if where == "arguments" else SENTENCES[0].text
    usage = Usage(1, None, 1, Provenance.PROVIDER_REPORTED)
    for cut in range(start + 1, start + len(placeholder)):
        offset = whole.index(placeholder) - start
        parts = [whole[: offset + cut], whole[offset + cut :]]
        if where == "text":
            deltas = [TextDelta(part) for part in parts]
            reply = ProviderReply(whole, (), "stop", usage, "m", "r")
        else:
            deltas = [ToolCallDelta(0, "call_1", "note", parts[0]), ToolCallDelta(0, None, None, parts[1])]
            reply = ProviderReply("", (ToolCall("call_1", "note", whole),), "tool_calls", usage, "m", "r")
        stream = GovernedStream(
            _stream([*deltas, StreamFinish(reply)]),
            finish=lambda r: Answered.__new__(Answered),
            broken=lambda e: pytest.fail("broken"),
            pseudonyms=pseudonyms,
        )
        pieces = list(stream)
        if where == "text":
            streamed = "".join(p.text for p in pieces if isinstance(p, TextDelta))
        else:
            streamed = "".join(p.arguments for p in pieces if isinstance(p, ToolCallDelta))
        assert streamed == expected, cut
