"""Every per-process cache is registered and cleared together (its table: tests/config/test_cache_registry.py)."""

from __future__ import annotations

import pytest

from agents.runtime.caches import caches_clear, registered_caches
from agents.runtime.conversation import Conversation, conversation_request
from agents.runtime.held_writes import distinct_parameters
from agents.runtime.plan import provider_config
from catalog.selectors import configuration_sources
from config.caches import CacheAlreadyRegistered, cache_register
from config.lru import CacheStats, LruCache
from governance.guardrails.redaction.streaming import StreamRedactor
from governance.policy import decide, enforcement_mode
from governance.services import decision_as_dict
from governance.vocabulary import TrustZone
from providers.adapters import ADAPTER_POOL
from tests.agents.runs import fake_configuration, run_to_end
from tests.factories import snippet_make
from tests.fakes.provider_server import Reply
from tools.models import McpServer

pytestmark = pytest.mark.django_db


def test_a_run_a_conversation_and_a_shown_decision_fill_every_cache_and_caches_clear_empties_them_all(
    fake_provider, django_capture_on_commit_callbacks
):
    fake_provider.script(Reply.tools(("c1", "snippets_by_tag", {"tags": ["tone"]})), Reply(text="Done."))
    # A switched-off MCP server the configuration names: its (empty) listing is kept without a call.
    McpServer.objects.create(
        name="off",
        transport="stdio",
        command="true",
        trust_zone="local",
        data_class="public_content",
        is_active=False,
    )
    configuration = fake_configuration(
        fake_provider, snippet_tags=["tone"], allowed_tool_groups=["content", "mcp:off"]
    )
    snippet_make(tags=("tone",), identifier="tone", text="Write warmly.")
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert run.status == "completed"
    # A decision shown to a client (a preview, a chat completion) has its identifiers redacted.
    decision = decide(configuration_sources(configuration), TrustZone.LOCAL, enforcement_mode())
    assert [s["identifier"] for s in decision_as_dict(decision)["sources"]] == [
        configuration.identifier,
        "tone",
    ]
    # A client's conversation (a chat completion's messages) keeps its plain messages parsed.
    conversation_request([{"role": "user", "content": "Hi"}], Conversation(default_class="public_content"))
    # A streamed reply's piece that ends after a word: may a key split there cross into the next piece?
    assert StreamRedactor().feed("Several words ") == "Several "
    # A write of many values on PostgreSQL (the suite's database is SQLite: its text alone).
    assert distinct_parameters("a = %s, b = %s", ["x", "x"]) == ("a = %(v0)s, b = %(v0)s", {"v0": "x"})
    sizes = {entry.name: entry.stats().size for entry in registered_caches()}
    assert [name for name, size in sizes.items() if size == 0] == []
    adapter = ADAPTER_POOL.get(provider_config(configuration.model))

    caches_clear()

    assert {entry.name: entry.stats() for entry in registered_caches()} == {
        entry.name: CacheStats(hits=0, misses=0, size=0, max_entries=entry.stats().max_entries)
        for entry in registered_caches()
    }
    assert adapter._client.is_closed()  # an adapter leaving the pool releases its connections


def test_a_name_is_registered_once():
    taken = registered_caches()[0]
    with pytest.raises(CacheAlreadyRegistered):
        cache_register(LruCache(1), name=taken.name, key="k", invalidation="i")
    assert cache_register(taken.cache, name=taken.name, key=taken.key, invalidation=taken.invalidation) is (
        taken.cache
    )
    assert registered_caches() == tuple(sorted(registered_caches(), key=lambda entry: entry.name))
