"""A body goes out as the bytes the SDK's own encoder writes, encoded by orjson (providers/base.py,
``json_sent``), in each of the four ways a call is sent; what orjson does not encode is the SDK's."""

from __future__ import annotations

import json
import math
import tracemalloc

from context_assembly.messages import Message
from providers.base import json_sent
from providers.openai_compatible import OpenAICompatibleAdapter
from tests.providers.sending import sent_four_ways
from tests.providers.test_openai_compatible import call, config

# Text that the standard library's encoder escapes in its own ways: quotes, backslashes, control
# characters, non-ASCII letters, an emoji outside the BMP, the line and paragraph separators.
AWKWARD = 'Quote " backslash \\ tab \t newline \n bell \x07 del \x7f é 漢字 🙂 \u2028 \u2029 </script>'


def test_each_way_of_sending_sends_the_bytes_the_sdk_would_have_encoded(fake_provider):
    adapter = OpenAICompatibleAdapter(config(fake_provider))
    messages = (Message(role="system", content=AWKWARD), Message(role="user", content="x" * 5000 + AWKWARD))
    whole, streamed = call(messages=messages, temperature=0.25), call(messages=messages, stream=True)
    sent_four_ways(adapter, whole, streamed)
    expected = [sdk_encoded(adapter.request_body(sent)) for sent in (whole, streamed, whole, streamed)]
    assert [request.raw for request in fake_provider.requests] == expected
    assert [request.headers["content-type"] for request in fake_provider.requests] == ["application/json"] * 4


def sdk_encoded(body: dict) -> bytes:
    """A body as the ``openai`` SDK encodes it (its JSON encoder's settings, which are httpx's)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def test_a_body_orjson_does_not_encode_is_left_to_the_sdk_and_a_float_that_is_no_number_is_null():
    too_big = {"seed": 2**70}
    assert json_sent(too_big) == {"body": too_big}
    assert json_sent({"temperature": math.nan}) == {"content": b'{"temperature":null}'}


def test_the_encoded_body_holds_no_spare_capacity():
    """A call holds its body until its answer (seconds, for a stream): its bytes are allocated at
    their size, not at the size of the encoder's buffer."""
    body = {"model": "m", "messages": [{"role": "user", "content": "hello " * 100}], "stream": True}
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        content = json_sent(body)["content"]
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    allocated = sum(stat.size_diff for stat in after.compare_to(before, "filename") if stat.size_diff > 0)
    assert len(content) == 669
    assert allocated < 2048  # the bytes and the argument's dict; the encoder's buffer alone is 8 KB
