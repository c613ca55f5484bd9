"""The preview compares live with live + my drafts: both budgets, the delta per part, each verdict."""

from __future__ import annotations

import pytest
from django.test import Client

from agents.runtime.plan import model_profile
from context_assembly.estimator import Estimator
from context_assembly.messages import Message
from governance.actors import Actor
from governance.drafts import draft_save
from governance.models import Draft, GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from snippets.composition import snippet_block
from snippets.models import Snippet
from tests.editor_accounts import editor_make
from tests.factories import configuration_make, snippet_make

pytestmark = pytest.mark.django_db

LIVE_PROMPT = "You write our newsletter."
DRAFT_PROMPT = "You write our newsletter. Keep every issue under three hundred words, in plain English."
LIVE_TEXT = "Warm."
DRAFT_TEXT = "Write warmly, briefly and concretely; greet readers by their first name."


def snippet_values(snippet: Snippet, **changes: object) -> dict[str, object]:
    values: dict[str, object] = {
        "identifier": snippet.identifier, "name": snippet.name, "description": "", "text": snippet.text,
        "tag_names": "tone", "is_active": True, "sorting": 0, "data_class": snippet.data_class,
        "ceiling": snippet.ceiling, "enforcement": snippet.enforcement, "metadata": {},
    }  # fmt: skip
    return {**values, **changes}


def configuration_values(configuration, **changes: object) -> dict[str, object]:
    values: dict[str, object] = {
        "identifier": configuration.identifier, "name": configuration.name, "model": configuration.model_id,
        "is_active": True, "snippet_tags": configuration.snippet_tags, "system_prompt": configuration.system_prompt,
        "system_prompt_data_class": configuration.system_prompt_data_class,
        "system_prompt_ceiling": configuration.system_prompt_ceiling,
        "system_prompt_enforcement": configuration.system_prompt_enforcement,
        "allow_system_override": False, "max_iterations": configuration.max_iterations,
        "context_usage_note": configuration.context_usage_note,
        "context_strategy": configuration.context_strategy,
        "compaction_threshold": configuration.compaction_threshold,
        "compaction_keep": configuration.compaction_keep,
    }  # fmt: skip
    return {**values, **changes}


def posted(**fields: str) -> dict[str, str]:
    return {
        "task_input": "Draft the issue.",
        "input_data_class": DataClass.PUBLIC_CONTENT,
        "context-TOTAL_FORMS": "2",
        "context-INITIAL_FORMS": "0",
        **fields,
    }


@pytest.fixture
def setting():
    configuration = configuration_make(
        identifier="newsletter", zone=TrustZone.EXTERNAL_GLOBAL, system_prompt=LIVE_PROMPT,
        snippet_tags=["tone"],
    )  # fmt: skip
    tone = snippet_make(identifier="tone-of-voice", name="Tone of voice", text=LIVE_TEXT, tags=("tone",))
    footer = snippet_make(identifier="footer", name="Footer", text="Sign off as the team.", tags=("tone",))
    return configuration, tone, footer


@pytest.fixture
def editor():
    return editor_make()


def compare(client: Client, configuration, **fields: str):
    response = client.post(
        f"/admin/catalog/configuration/{configuration.pk}/preview/", posted(compare="on", **fields)
    )
    assert response.status_code == 200
    return response


def rows(response) -> dict[str, tuple[int | None, int | None, int]]:
    return {row.key: (row.live, row.drafted, row.delta) for row in response.context["comparison"].rows}


def test_compare_shows_each_part_live_and_with_my_drafts_counted_by_the_one_estimator(
    client, setting, editor
):
    configuration, tone, footer = setting
    actor = Actor.of_user(editor)
    draft_save(row=tone, values=snippet_values(tone, text=DRAFT_TEXT), actor=actor)
    draft_save(
        row=configuration, values=configuration_values(configuration, system_prompt=DRAFT_PROMPT), actor=actor
    )
    client.force_login(editor)

    response = compare(client, configuration)

    estimator = Estimator(model_profile(configuration.model))
    prompt_live = estimator.count_message(Message(role="system", content=LIVE_PROMPT))
    prompt_draft = estimator.count_message(Message(role="system", content=DRAFT_PROMPT))
    drafted_tone = Snippet.objects.get(pk=tone.pk)
    drafted_tone.text = DRAFT_TEXT
    tone_live = estimator.count_text(snippet_block([tone]))
    tone_draft = estimator.count_text(snippet_block([drafted_tone]))
    footer_tokens = estimator.count_text(snippet_block([footer]))
    got = rows(response)
    assert got["system_prompt"] == (prompt_live, prompt_draft, prompt_draft - prompt_live)
    assert got["snippet:footer"] == (footer_tokens, footer_tokens, 0)
    assert got["snippet:tone-of-voice"] == (tone_live, tone_draft, tone_draft - tone_live)
    assert tone_draft > tone_live and prompt_draft > prompt_live
    system_live = estimator.count_message(
        Message(role="system", content=f"{LIVE_PROMPT}\n\n{snippet_block([footer, tone])}")
    )
    system_draft = estimator.count_message(
        Message(role="system", content=f"{DRAFT_PROMPT}\n\n{snippet_block([footer, drafted_tone])}")
    )
    assert got["snippets"] == (
        system_live - prompt_live, system_draft - prompt_draft,
        (system_draft - prompt_draft) - (system_live - prompt_live),
    )  # fmt: skip
    assert got["skills"] == (0, 0, 0)
    assert got["caller_context"] == (0, 0, 0)
    comparison = response.context["comparison"]
    live, drafted = comparison.live.preview.fitted.breakdown, comparison.drafted.preview.fitted.breakdown
    assert got["estimated"] == (live.estimated, drafted.estimated, system_draft - system_live)
    assert live.estimated == response.context["preview"].fitted.breakdown.estimated
    assert comparison.applied == ("configuration newsletter", "snippet tone-of-voice")
    html = response.content.decode()
    assert f'<td class="num delta delta-up">+{tone_draft - tone_live}</td>' in html
    share_live, share_draft = 100 * live.estimated / live.window, 100 * drafted.estimated / drafted.window
    assert f"{share_live:.2f}%" in html and f"{share_draft:.2f}%" in html
    assert f"{share_draft - share_live:+.2f} points" in html
    assert html.count('class="verdict verdict-yes">Would send</span>') == 2
    assert 'id="live-budget-bar"' in html and 'id="drafted-budget-bar"' in html
    # The page's own sections stay live, the drafts stay drafts, and nothing was recorded.
    assert response.context["preview"].plan.configuration.system_prompt == LIVE_PROMPT
    assert Snippet.objects.get(pk=tone.pk).text == LIVE_TEXT
    assert Draft.objects.count() == 2
    assert GovernanceEvent.objects.count() == 0


def test_each_side_has_its_own_verdict(client, setting, editor):
    configuration, tone, _ = setting
    loosened = snippet_values(tone, data_class=DataClass.SOURCE_CODE, ceiling=TrustZone.EXTERNAL_EU)
    draft_save(row=tone, values=loosened, actor=Actor.of_user(editor))
    client.force_login(editor)

    response = compare(client, configuration)

    comparison = response.context["comparison"]
    assert (comparison.live.verdict, comparison.drafted.verdict) == ("Would send", "Would not send")
    html = response.content.decode()
    assert '<span class="verdict verdict-no">Would not send</span>' in html


def test_another_editors_drafts_are_not_mine(client, setting, editor):
    configuration, tone, _ = setting
    draft_save(
        row=tone, values=snippet_values(tone, text=DRAFT_TEXT), actor=Actor.of_user(editor_make("other"))
    )
    client.force_login(editor)

    response = compare(client, configuration)

    comparison = response.context["comparison"]
    assert comparison.applied == ()
    assert {delta for _, _, delta in rows(response).values()} == {0}
    assert "You have no drafts: both sides are live." in response.content.decode()


def test_a_draft_that_renames_a_snippet_replaces_it(client, setting, editor):
    configuration, tone, _ = setting
    draft_save(row=tone, values=snippet_values(tone, identifier="tone"), actor=Actor.of_user(editor))
    client.force_login(editor)

    got = rows(compare(client, configuration))

    assert got["snippet:tone-of-voice"][1] is None
    assert got["snippet:tone"][0] is None
    assert got["snippet:tone"][1] == got["snippet:tone-of-voice"][0]


def test_without_compare_there_is_no_comparison(client, setting, editor):
    configuration, tone, _ = setting
    draft_save(row=tone, values=snippet_values(tone, text=DRAFT_TEXT), actor=Actor.of_user(editor))
    client.force_login(editor)

    response = client.post(f"/admin/catalog/configuration/{configuration.pk}/preview/", posted())

    assert response.context["comparison"] is None
    assert 'id="draft-comparison"' not in response.content.decode()
