"""The configuration preview page: what a send would assemble, decide and fit, for a sample request.

It calls :func:`agents.runtime.preview.context_preview`, the function behind the preview API, so the
page shows exactly what the API (and a run) would: the redacted messages role by role, every source's
outcome for the serving zone, the reports, and the budget breakdown. Like the API it records nothing.

With "compare", the page also shows the live assembly beside live + the editor's own drafts, part by
part (editors/admin/draft_compare.py); drafts are never sent.

Staff may read what a send would refuse, but the page never presents it as sent: a refused part is
marked where it stands in its message (kind, identifier, class, ceiling, reason) and its text is struck
through, and when the verdict is not to send, the messages section says that nothing would be sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib.admin import ModelAdmin
from django.core.exceptions import PermissionDenied
from django.forms import BaseFormSet, formset_factory
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.template.response import TemplateResponse

from agents.runtime.preview import ContextPreview, PreviewPart, context_preview, decided_parts, preview_parts
from agents.runtime.request import SendRequest
from catalog.models import Configuration
from config.errors import ApplicationError
from context_assembly.assembly import ContextItem
from context_assembly.messages import Message
from editors.admin.budget_bar import BudgetBar, budget_bar
from editors.admin.draft_compare import DraftComparison, draft_comparison
from governance.policy import SourceDecision
from governance.vocabulary import DataClass, Outcome, TrustZone
from skills.models import Skill

PREVIEW_PERMISSION = "catalog.view_configuration"
DEFAULT_INPUT = "Summarise what you can help me with."
_CLASS_CHOICES = [("", "---------"), *DataClass.choices]


class SkillChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        state = "" if obj.is_enabled else " (disabled)"
        return f"{obj.name} — {obj.source.name}{state}"


class PreviewForm(forms.Form):
    task_input = forms.CharField(
        label="Sample input", widget=forms.Textarea(attrs={"rows": 3, "cols": 80}), initial=DEFAULT_INPUT
    )
    input_data_class = forms.ChoiceField(
        label="Input data class", choices=DataClass.choices, initial=DataClass.EDITOR_CONTENT
    )
    request_skills = SkillChoiceField(
        label="Request skills",
        queryset=Skill.objects.filter(is_orphaned=False).select_related("source").order_by("name"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    max_tokens = forms.IntegerField(
        label="Max output tokens", required=False, min_value=1, help_text="Empty: the model's maximum output."
    )
    receiver_zone = forms.ChoiceField(
        label="Answers delivered to",
        choices=[("", "Nobody outside this page"), *TrustZone.choices],
        required=False,
        help_text="The zone of the client who would read the answer: sources above it are refused for "
        "it, as an API client in that zone is refused (unless the configuration declassifies its answers).",
    )
    compare = forms.BooleanField(
        label="Compare live with live + my drafts",
        required=False,
        help_text="Your drafts of snippets and of this configuration, side by side with live; never sent.",
    )


class ContextItemForm(forms.Form):
    name = forms.CharField(max_length=200, required=False)
    data_class = forms.ChoiceField(choices=_CLASS_CHOICES, required=False)
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 2, "cols": 60}), required=False)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        filled = [bool(data.get(f)) for f in ("name", "data_class", "text")]
        if any(filled) and not all(filled):
            raise forms.ValidationError("A context item needs a name, a data class and a text.")
        return data


ContextItemFormSet = formset_factory(ContextItemForm, extra=2, max_num=10, validate_max=True)


@dataclass(frozen=True)
class ShownSpan:
    """A stretch of a message's text; ``refused`` is the decision when it is a part the send refuses."""

    text: str
    refused: SourceDecision | None = None


@dataclass(frozen=True)
class ShownMessage:
    role: str
    content: str
    tool_calls: tuple[str, ...]
    spans: tuple[ShownSpan, ...]

    @property
    def refused(self) -> bool:
        return any(span.refused is not None for span in self.spans)


def _text_of(message: Message) -> str:
    """A message as text for the page (image parts shown by their URL, never fetched)."""
    if isinstance(message.content, str):
        return message.content
    return "\n".join(getattr(part, "text", None) or f"[image {part.url}]" for part in message.content)  # type: ignore[union-attr]


def shown_message(
    message: Message, parts: tuple[tuple[PreviewPart, SourceDecision | None], ...] = ()
) -> ShownMessage:
    """``message`` with the refused ones among its ``parts`` marked where they stand in its text."""
    content = _text_of(message)
    calls = tuple(f"{call.name}({call.arguments})" for call in message.tool_calls)
    return ShownMessage(role=message.role, content=content, tool_calls=calls, spans=_spans(content, parts))


def _spans(
    content: str, parts: tuple[tuple[PreviewPart, SourceDecision | None], ...]
) -> tuple[ShownSpan, ...]:
    """``content`` cut at each part, in order. A part that cannot be found in the text (which the
    preview's part-by-part redaction rules out) makes the message shown part by part instead, so a
    refused part is never shown unmarked."""
    spans: list[ShownSpan] = []
    cursor = 0
    for part, verdict in parts:
        start = content.find(part.text, cursor)
        if start < 0:
            return _merged([_marked(part.text, verdict) for part, verdict in parts])
        spans += [ShownSpan(content[cursor:start]), _marked(part.text, verdict)]
        cursor = start + len(part.text)
    spans.append(ShownSpan(content[cursor:]))
    return _merged(spans)


def _merged(spans: list[ShownSpan]) -> tuple[ShownSpan, ...]:
    """Adjacent stretches that are not refused joined into one; empty ones left out."""
    merged: list[ShownSpan] = []
    for span in spans:
        if merged and span.refused is None and merged[-1].refused is None:
            merged[-1] = ShownSpan(merged[-1].text + span.text)
        elif span.text or span.refused is not None:
            merged.append(span)
    return tuple(merged)


def _marked(text: str, verdict: SourceDecision | None) -> ShownSpan:
    refused = verdict if verdict is not None and verdict.outcome == Outcome.REFUSED else None
    return ShownSpan(text, refused)


def preview_request(form: PreviewForm, items: BaseFormSet) -> tuple[SendRequest, int | None]:
    data = form.cleaned_data
    context = tuple(
        ContextItem(name=item["name"], text=item["text"], data_class=item["data_class"])
        for item in items.cleaned_data
        if item.get("name")
    )
    request = SendRequest(
        task_input=data["task_input"],
        input_data_class=data["input_data_class"],
        caller_context=context,
        request_skills=tuple(data["request_skills"]),
        receiver_zone=TrustZone(data["receiver_zone"]) if data.get("receiver_zone") else None,
        receiver_name=f"a receiver in {data['receiver_zone']}" if data.get("receiver_zone") else "",
    )
    return request, data.get("max_tokens")


def _bound_forms(request: HttpRequest) -> tuple[PreviewForm, Any]:
    """Bound to the posted form once the editor submitted it; else the defaults, validated.

    Only a POST body is read: sample inputs and context items often hold what an editor would not
    want in an access log or in browser history, so nothing is taken from the query string.
    """
    if request.method != "POST":
        initial = {"task_input": DEFAULT_INPUT, "input_data_class": DataClass.EDITOR_CONTENT}
        items = ContextItemFormSet(
            prefix="context", data={"context-TOTAL_FORMS": "2", "context-INITIAL_FORMS": "0"}
        )
        return PreviewForm(data=initial), items
    return PreviewForm(data=request.POST), ContextItemFormSet(prefix="context", data=request.POST)


def _preview_or_error(
    request: HttpRequest, form: PreviewForm, items: Any, configuration: Configuration
) -> tuple[ContextPreview | None, DraftComparison | None, str]:
    """The live preview, and its comparison with the editor's drafts when the form asks for it."""
    if not (form.is_valid() and items.is_valid()):
        return None, None, ""
    send_request, max_tokens = preview_request(form, items)
    try:
        preview = context_preview(configuration=configuration, request=send_request, max_tokens=max_tokens)
    except ApplicationError as exc:
        return None, None, exc.message
    editor = request.user.pk  # "my drafts": a signed-in editor's (the page needs a permission)
    if not form.cleaned_data.get("compare") or editor is None:
        return preview, None, ""
    comparison = draft_comparison(
        live=preview,
        configuration=configuration,
        request=send_request,
        max_tokens=max_tokens,
        author_id=editor,
    )
    return preview, comparison, ""


def preview_view(model_admin: ModelAdmin, request: HttpRequest, object_id: str) -> HttpResponse:
    """GET shows the defaults; the form posts (CSRF-protected by the admin site), and the preview
    records nothing either way."""
    if request.method not in ("GET", "POST"):
        return HttpResponseNotAllowed(["GET", "POST"])
    if not request.user.has_perm(PREVIEW_PERMISSION):
        raise PermissionDenied
    configuration = model_admin.get_object(request, object_id)
    if configuration is None:
        raise Http404("No such configuration.")
    form, items = _bound_forms(request)
    preview, comparison, error = _preview_or_error(request, form, items, configuration)
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"Context preview: {configuration.identifier}",
        "opts": model_admin.model._meta,
        "original": configuration,
        "configuration": configuration,
        "form": form,
        "items": items,
        "error": error,
        "preview": preview,
        "comparison": comparison,
        **(_preview_context(preview) if preview else {}),
    }
    return TemplateResponse(request, "admin/editors/configuration/preview.html", context)


def _preview_context(preview: ContextPreview) -> dict[str, Any]:
    plan = preview.plan
    bar: BudgetBar = budget_bar(preview.fitted.breakdown.as_dict())
    return {
        "messages_shown": _messages_shown(preview),
        "sources": preview.decision.sources,
        "bar": bar,
        "tools_offered": [spec.name for spec in plan.assembled.tool_specs],
        "unknown_tags": preview.provenance.unknown_tags,
        "empty_tags": preview.provenance.empty_tags,
        "dropped_skills": preview.provenance.dropped_skills,
        "denied_tools": [(verdict.name, verdict.denial.value) for verdict in plan.denied_tools],
        "redactions": sorted(plan.redactions.items()),
    }


def _messages_shown(preview: ContextPreview) -> list[ShownMessage]:
    """The fitted messages, each with its parts as the governance decision sees them."""
    decided = decided_parts(preview_parts(preview.plan, preview.provenance), send_zone=preview.plan.zone)
    return [
        shown_message(message, tuple(item for item in decided if item[0].message == index))
        for index, message in enumerate(preview.fitted.messages)
    ]
