"""The fake's Anthropic prompt cache (``FakeProvider(prompt_cache=True)``), driven by the real SDK."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from context_assembly.encodings import get_encoding
from tests.fakes.provider_server import FakeProvider

MARK = {"type": "ephemeral"}
SYSTEM = "You answer questions about the house style. " * 40


def o200k(text: str) -> int:
    return len(get_encoding("o200k_base").encode(text))


@pytest.fixture
def caching():
    with FakeProvider(prompt_cache=True) as fake:
        yield fake


def usage(fake: FakeProvider, *, system: Any = SYSTEM, messages: list[dict[str, Any]]) -> dict[str, int]:
    client = anthropic.Anthropic(base_url=fake.anthropic_base_url, api_key="fake", max_retries=0)
    try:
        reply = client.messages.create(model="claude-x", max_tokens=50, system=system, messages=messages)
    finally:
        client.close()
    return {
        "read": reply.usage.cache_read_input_tokens,
        "written": reply.usage.cache_creation_input_tokens,
        "input": reply.usage.input_tokens,
    }


def text(value: str, marked: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": value}
    if marked:
        block["cache_control"] = MARK
    return block


def marked_system() -> list[dict[str, Any]]:
    return [text(SYSTEM, marked=True)]


SYSTEM_TOKENS = 3 + o200k("system") + o200k(SYSTEM)


def test_a_marked_prefix_is_written_once_then_read(caching):
    first = usage(caching, system=marked_system(), messages=[{"role": "user", "content": "Hello"}])
    user_tokens = 3 + o200k("user") + o200k("Hello")
    assert first == {"read": 0, "written": SYSTEM_TOKENS, "input": user_tokens + 3}
    second = usage(caching, system=marked_system(), messages=[{"role": "user", "content": "Bye"}])
    assert second == {"read": SYSTEM_TOKENS, "written": 0, "input": 3 + o200k("user") + o200k("Bye") + 3}


def test_the_longest_written_prefix_is_read_and_the_rest_up_to_the_last_mark_is_written(caching):
    turn_one = [{"role": "user", "content": [text("Question one?", marked=True)]}]
    usage(caching, system=marked_system(), messages=turn_one)
    turn_two = [
        {"role": "user", "content": [text("Question one?")]},
        {"role": "assistant", "content": [text("Answer one.")]},
        {"role": "user", "content": [text("Question two?", marked=True)]},
    ]
    second = usage(caching, system=marked_system(), messages=turn_two)
    first_user = 3 + o200k("user") + o200k("Question one?")
    later = (3 + o200k("assistant") + o200k("Answer one.")) + (3 + o200k("user") + o200k("Question two?"))
    assert second == {"read": SYSTEM_TOKENS + first_user, "written": later, "input": 3}


def test_the_default_fake_reports_no_cache_activity(fake_provider):
    result = usage(fake_provider, system=marked_system(), messages=[{"role": "user", "content": "Hi"}])
    assert (result["read"], result["written"]) == (0, 0)


def test_an_unmarked_request_neither_reads_nor_writes(caching):
    usage(caching, system=marked_system(), messages=[{"role": "user", "content": "Hello"}])
    plain = usage(caching, system=SYSTEM, messages=[{"role": "user", "content": "Hello"}])
    assert (plain["read"], plain["written"]) == (0, 0)


def test_a_changed_block_breaks_the_prefix(caching):
    usage(caching, system=marked_system(), messages=[{"role": "user", "content": "Hello"}])
    other = usage(
        caching, system=[text(SYSTEM + "!", marked=True)], messages=[{"role": "user", "content": "Hi"}]
    )
    assert other["read"] == 0


def test_a_prefix_below_the_minimum_is_not_written():
    with FakeProvider(prompt_cache=True, cache_min_tokens=SYSTEM_TOKENS + 1) as fake:
        usage(fake, system=marked_system(), messages=[{"role": "user", "content": "Hello"}])
        again = usage(fake, system=marked_system(), messages=[{"role": "user", "content": "Hello"}])
    assert (again["read"], again["written"]) == (0, 0)


def test_a_write_more_than_twenty_blocks_back_is_not_found(caching):
    first = [{"role": "user", "content": [text("Start", marked=True)]}]
    usage(caching, system=[text(SYSTEM)], messages=first)
    # The breakpoint's own boundary and the 19 before it are looked at.
    blocks = [text("Start")] + [text(f"Part {n}.") for n in range(18)]
    near = [{"role": "user", "content": [*blocks, text("End.", marked=True)]}]
    assert usage(caching, system=[text(SYSTEM)], messages=near)["read"] > 0  # the 20th boundary
    caching.reset()
    usage(caching, system=[text(SYSTEM)], messages=first)
    blocks.append(text("Part 18."))
    far = [{"role": "user", "content": [*blocks, text("End.", marked=True)]}]
    assert usage(caching, system=[text(SYSTEM)], messages=far)["read"] == 0  # the 21st
