"""The configuration preview page: the API's preview, drawn for editors, behind admin permissions."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.runtime.preview import context_preview
from agents.runtime.request import SendRequest
from context_assembly.assembly import ContextItem
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.editor_accounts import editor_make
from tests.factories import configuration_make, model_make, skill_make, snippet_make

pytestmark = pytest.mark.django_db


def preview_url(configuration) -> str:
    return f"/admin/catalog/configuration/{configuration.pk}/preview/"


def submitted(**fields) -> dict[str, str]:
    data = {
        "task_input": "Draft the issue.",
        "input_data_class": DataClass.PUBLIC_CONTENT,
        "context-TOTAL_FORMS": "2",
        "context-INITIAL_FORMS": "0",
    }
    data.update(fields)
    return data


def test_preview_page_shows_the_same_sources_and_breakdown_as_the_preview_function(admin_client):
    snippet_make(identifier="tone", name="Tone", text="Warm.", tags=("tone",))
    snippet_make(
        identifier="runbook", name="Runbook", text="Restart X.", tags=("tone",),
        data_class=DataClass.SOURCE_CODE, ceiling=TrustZone.EXTERNAL_EU,
    )  # fmt: skip
    configuration = configuration_make(zone=TrustZone.EXTERNAL_GLOBAL, snippet_tags=["tone", "ghost"])
    query = submitted(
        **{"context-0-name": "brief", "context-0-data_class": "editor_content", "context-0-text": "Notes."}
    )

    response = admin_client.post(preview_url(configuration), query)

    expected = context_preview(
        configuration=configuration,
        request=SendRequest(
            task_input="Draft the issue.",
            input_data_class=DataClass.PUBLIC_CONTENT,
            caller_context=(ContextItem("brief", "Notes.", "editor_content"),),
        ),
    )
    assert response.status_code == 200
    shown = response.context["sources"]
    assert shown == expected.decision.sources
    assert [(s.identifier, s.outcome.value) for s in shown] == [
        (configuration.identifier, "allowed"), ("runbook", "refused"), ("tone", "allowed"),
        ("context[0]", "allowed"), ("task_input", "allowed"),
    ]  # fmt: skip
    bar = response.context["bar"]
    breakdown = expected.fitted.breakdown
    assert {s.key: s.tokens for s in bar.segments}["snippets"] == breakdown.snippets
    assert sum(s.tokens for s in bar.segments) == breakdown.window
    html = response.content.decode()
    assert '<span class="verdict verdict-no" id="verdict">Would not send</span>' in html
    assert '<span class="outcome outcome-refused">Refused</span>' in html
    assert (
        "<td>Source code</td>\n        <td>External (EU)</td><td>Enforce</td>" in html
    )  # labels, not values
    assert "Unknown tags: <code>ghost</code>" in html
    assert GovernanceEvent.objects.count() == 0


def test_messages_render_escaped_role_by_role_after_redaction(admin_client):
    snippet_make(identifier="tone", name="Tone", text="<b>Warm</b>", tags=("tone",))
    configuration = configuration_make(snippet_tags=["tone"], system_prompt="Be kind.")
    token = "gh" + "p_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"

    response = admin_client.post(preview_url(configuration), submitted(task_input=f"Use {token}"))

    html = response.content.decode()
    assert [m.role for m in response.context["messages_shown"]] == ["system", "user"]
    assert "<pre>Be kind.\n\nTone:\n&lt;b&gt;Warm&lt;/b&gt;</pre>" in html
    assert "<pre>Use [REDACTED:github_token]</pre>" in html
    assert token not in html[html.index('id="messages"') :]  # the form echoes the editor's own input
    assert "1 x <code>github_token</code>" in html


def test_request_skills_are_added_to_the_first_user_message(admin_client, tmp_path):
    skill = skill_make(tmp_path, name="house-style", body="Write plainly.\n")
    configuration = configuration_make()

    response = admin_client.post(preview_url(configuration), submitted(request_skills=[str(skill.pk)]))

    sources = [(s.kind.value, s.identifier) for s in response.context["sources"]]
    assert ("skill", skill.identifier) in sources
    assert "Write plainly." in response.context["messages_shown"][1].content


def test_the_page_opens_with_a_default_request_and_links_from_the_configuration(admin_client):
    configuration = configuration_make()
    response = admin_client.get(preview_url(configuration))
    assert response.status_code == 200
    assert response.context["messages_shown"][-1].content == "Summarise what you can help me with."
    change = admin_client.get(f"/admin/catalog/configuration/{configuration.pk}/change/").content.decode()
    listing = admin_client.get("/admin/catalog/configuration/").content.decode()
    link = f'<a href="{preview_url(configuration)}">Preview context</a>'
    assert link in change
    assert link in listing


def test_an_incomplete_context_item_is_a_form_error_and_no_preview(admin_client):
    configuration = configuration_make()
    response = admin_client.post(preview_url(configuration), submitted(**{"context-0-name": "brief"}))
    assert response.status_code == 200
    assert response.context["preview"] is None
    assert "A context item needs a name, a data class and a text." in response.content.decode()


def test_non_staff_users_are_sent_to_the_login_page(client):
    configuration = configuration_make()
    User.objects.create_user(username="reader", password="pw-" + "reader")
    client.force_login(User.objects.get(username="reader"))
    response = client.get(preview_url(configuration))
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_staff_without_configuration_permission_get_403(client):
    configuration = configuration_make()
    staff = User.objects.create_user(username="staff", password="pw-" + "staff", is_staff=True)
    client.force_login(staff)
    assert client.get(preview_url(configuration)).status_code == 403


def test_editors_may_open_the_preview(client):
    configuration = configuration_make()
    client.force_login(editor_make())
    assert client.get(preview_url(configuration)).status_code == 200


def test_an_unknown_configuration_is_404(admin_client):
    assert admin_client.get("/admin/catalog/configuration/999999/preview/").status_code == 404


def test_the_form_posts_so_inputs_never_travel_in_the_url(admin_client):
    configuration = configuration_make()

    page = admin_client.get(preview_url(configuration)).content.decode()

    assert '<form method="post" class="preview-form" id="preview-form">' in page
    assert 'name="csrfmiddlewaretoken"' in page


def test_a_query_string_is_never_read_as_the_sample_request(admin_client):
    configuration = configuration_make()

    response = admin_client.get(preview_url(configuration), submitted(task_input="From the address bar."))

    assert response.context["form"].data["task_input"] == "Summarise what you can help me with."
    assert "From the address bar." not in response.content.decode()


def test_a_post_without_the_csrf_token_is_refused_and_previews_nothing():
    configuration = configuration_make()
    client = Client(enforce_csrf_checks=True)
    client.force_login(User.objects.create_superuser(username="root", password="pw-" + "root"))

    response = client.post(preview_url(configuration), submitted(task_input="Draft it."))

    assert response.status_code == 403
    assert b"CSRF" in response.content
    assert GovernanceEvent.objects.count() == 0


def test_a_refused_part_is_marked_in_place_and_the_section_says_nothing_would_be_sent(admin_client):
    snippet_make(identifier="tone", name="Tone", text="Warm.", tags=("tone",))
    snippet_make(
        identifier="runbook", name="Runbook", text="Restart <X>.", tags=("tone",),
        data_class=DataClass.SOURCE_CODE, ceiling=TrustZone.EXTERNAL_EU,
    )  # fmt: skip
    configuration = configuration_make(
        zone=TrustZone.EXTERNAL_GLOBAL, snippet_tags=["tone"], system_prompt="Be kind."
    )

    response = admin_client.post(preview_url(configuration), submitted())

    [refused] = [s for s in response.context["sources"] if s.outcome.value == "refused"]
    system = response.context["messages_shown"][0]
    assert [(span.text, span.refused) for span in system.spans] == [
        ("Be kind.\n\n", None),
        ("Runbook:\nRestart <X>.", refused),
        ("\n\nTone:\nWarm.", None),
    ]
    assert [m.refused for m in response.context["messages_shown"]] == [True, False]
    html = response.content.decode()
    assert "<h2>Messages as assembled: nothing would be sent</h2>" in html
    assert "Messages as the model would receive them" not in html
    assert (
        '<p class="nothing-sent" id="nothing-sent">Nothing would be sent to the model:\n'
        "    governance refuses 1 source for this zone." in html
    )
    assert (
        '<pre>Be kind.\n\n<span class="part-refused" data-source="snippet:runbook">'
        '<span class="refused-label">Refused, not sent: Snippet <code>runbook</code>, class '
        "Source code, ceiling External (EU): "
        f"{refused.reason}</span>"
        '<del class="refused-text">Runbook:\nRestart &lt;X&gt;.</del></span>\n\nTone:\nWarm.</pre>'
    ) in html.replace("&#x27;", "'")


def test_an_answer_delivered_to_a_lower_zone_refuses_what_that_zone_may_not_read(admin_client):
    snippet_make(
        identifier="runbook", name="Runbook", text="Restart it.", tags=("ops",),
        data_class=DataClass.INTERNAL_CONFIGURATION, ceiling=TrustZone.LOCAL,
    )  # fmt: skip
    configuration = configuration_make(zone=TrustZone.LOCAL, snippet_tags=["ops"], system_prompt="Be kind.")

    for_staff = admin_client.post(preview_url(configuration), submitted())
    for_public = admin_client.post(
        preview_url(configuration), submitted(receiver_zone=TrustZone.EXTERNAL_GLOBAL.value)
    )

    assert for_staff.context["preview"].would_send is True
    preview = for_public.context["preview"]
    assert preview.would_send is False
    [refused] = preview.decision.refused
    assert (refused.kind, refused.identifier, refused.by_receiver) == ("snippet", "runbook", True)
    assert "a receiver in external_global" in refused.reason
    assert GovernanceEvent.objects.count() == 0


def test_a_permitted_preview_marks_nothing(admin_client):
    snippet_make(identifier="tone", name="Tone", text="Warm.", tags=("tone",))
    configuration = configuration_make(snippet_tags=["tone"], system_prompt="Be kind.")

    response = admin_client.post(preview_url(configuration), submitted())

    html = response.content.decode()
    assert "<h2>Messages as the model would receive them</h2>" in html
    assert 'id="nothing-sent"' not in html
    assert 'class="part-refused"' not in html
    assert [m.refused for m in response.context["messages_shown"]] == [False, False]
    assert [span.text for span in response.context["messages_shown"][1].spans] == ["Draft the issue."]


def test_an_overflowing_context_says_nothing_would_be_sent_and_why(admin_client):
    configuration = configuration_make(
        system_prompt="Be kind. " * 4000, model=model_make(context_window=8_000, max_output_tokens=1_000)
    )

    response = admin_client.post(preview_url(configuration), submitted())

    assert response.context["preview"].fitted.overflow
    html = response.content.decode()
    assert (
        '<p class="nothing-sent" id="nothing-sent">Nothing would be sent to the model:\n'
        "    the context does not fit the budget." in html
    )
    assert 'class="part-refused"' not in html
