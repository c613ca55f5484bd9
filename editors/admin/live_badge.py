"""The live token badge endpoint: what the text being typed in a snippet or a configuration's system
prompt costs, before it is saved (editors/edit_effects.py has the figures).

POST only, CSRF-protected by the admin site: the text travels in the body, never in a URL (an access
log or the browser history would keep it). Staff with the change (or, for a new object, add)
permission of the kind edited. The answer holds figures and identifiers, never text.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.admin import ModelAdmin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse

from catalog.models import Configuration, LlmModel
from context_assembly.badges import TokenBadge, token_badge
from editors.edit_effects import snippet_edit_effects, system_prompt_badge
from snippets.models import Snippet
from snippets.selectors import SnippetEdit

KINDS = {"snippet": "snippets.%s_snippet", "configuration": "agents.%s_configuration"}
MAX_TEXT_CHARS = 1_000_000
NO_BADGE = "—"


class LiveBadgeForm(forms.Form):
    kind = forms.ChoiceField(choices=[(kind, kind) for kind in KINDS])
    object_id = forms.IntegerField(required=False, min_value=1)
    text = forms.CharField(required=False, strip=False, max_length=MAX_TEXT_CHARS)
    # A snippet's name (its block heading), identifier, sorting and tags as typed.
    name = forms.CharField(required=False, max_length=200)
    identifier = forms.CharField(required=False, max_length=200)
    sorting = forms.IntegerField(required=False)
    tag_names = forms.CharField(required=False, max_length=10_000)
    # A configuration's model as selected.
    model = forms.IntegerField(required=False, min_value=1)


def live_badge_view(model_admin: ModelAdmin, request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    form = LiveBadgeForm(request.POST)
    if not form.is_valid():
        return JsonResponse(
            {"code": "invalid", "message": "Invalid badge request.", "extra": form.errors}, status=400
        )
    data = form.cleaned_data
    action = "change" if data["object_id"] else "add"
    if not request.user.has_perm(KINDS[data["kind"]] % action):
        raise PermissionDenied
    if data["kind"] == "snippet":
        return JsonResponse(_snippet_answer(data))
    return JsonResponse(_configuration_answer(data))


def _snippet_answer(data: dict[str, Any]) -> dict[str, Any]:
    saved = (
        Snippet.objects.prefetch_related("tags").filter(pk=data["object_id"]).first()
        if data["object_id"]
        else None
    )
    edited = Snippet(
        identifier=saved.identifier if saved else (data["identifier"] or "(new snippet)"),
        name=data["name"] or (saved.name if saved else ""),
        text=data["text"],
        sorting=data["sorting"] if data["sorting"] is not None else (saved.sorting if saved else 0),
        is_active=saved.is_active if saved else True,
        data_class=saved.data_class if saved else "",
        ceiling=saved.ceiling if saved else "",
    )
    edit = SnippetEdit(snippet=edited, tags=tuple(data["tag_names"].split(",")))
    saved_tags = [tag.name for tag in saved.tags.all()] if saved else []
    effects = snippet_edit_effects(edit=edit, saved_tags=saved_tags)
    badge = token_badge(data["text"]) if data["text"] else None
    return {"badge": _badge(badge), "configurations": [effect.as_dict() for effect in effects]}


def _configuration_answer(data: dict[str, Any]) -> dict[str, Any]:
    saved = (
        Configuration.objects.select_related("model").filter(pk=data["object_id"]).first()
        if data["object_id"]
        else None
    )
    model = LlmModel.objects.filter(pk=data["model"]).first() if data["model"] else None
    configuration = Configuration(model=model) if model else saved
    if configuration is None or not data["text"]:
        return {"badge": _badge(None), "configurations": []}
    return {
        "badge": _badge(system_prompt_badge(text=data["text"], configuration=configuration)),
        "configurations": [],
    }


def _badge(badge: TokenBadge | None) -> dict[str, Any]:
    """The badge as the saved page shows it: "—" for no text (or no profile to count for)."""
    if badge is None:
        return {"label": NO_BADGE, "tokens": None}
    return {"label": badge.label, "tokens": badge.tokens}
