"""The one Actor type: users, API clients and processes, named alike in audit, events and history."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, Permission
from django.test import RequestFactory

from catalog.services import api_client_create
from governance.actors import Actor, ActorKind, request_actor

pytestmark = pytest.mark.django_db


def test_each_kind_of_actor_has_its_label_and_history_author(django_user_model):
    user = django_user_model.objects.create_user("alice")
    person = Actor.of_user(user)
    client = Actor.of_api_client("ci-bot", may_declassify=False)
    process = Actor.system("task:sync_skill_source")

    assert [(a.kind, a.label, a.api_client) for a in (person, client, process)] == [
        (ActorKind.USER, "user:alice", ""),
        (ActorKind.API_CLIENT, "api_client:ci-bot", "ci-bot"),
        (ActorKind.SYSTEM, "task:sync_skill_source", ""),
    ]
    # A user is the version's history_user; anyone else is named in the change reason.
    assert [a.change_reason("updated") for a in (person, client, process)] == [
        "updated",
        "updated by api_client:ci-bot",
        "updated by task:sync_skill_source",
    ]
    assert person.user == user
    assert client.user is None


def test_a_change_reason_fits_the_history_column():
    long_name = Actor.of_api_client("c" * 100, may_declassify=False)
    assert len(long_name.change_reason("updated")) == 100


def test_an_api_client_acts_as_itself_and_may_declassify_only_with_the_classify_scope():
    plain = api_client_create(name="writer", scopes=["snippets:write"]).client
    classifier = api_client_create(name="classifier", scopes=["snippets:write", "governance:classify"]).client

    assert plain.as_actor() == Actor.of_api_client("writer", may_declassify=False)
    assert plain.as_actor().may_declassify is False
    assert classifier.as_actor().may_declassify is True


def test_the_request_names_its_actor(django_user_model):
    request = RequestFactory().get("/")
    request.user = django_user_model.objects.create_user("carol")
    assert request_actor(request).label == "user:carol"

    request.user = api_client_create(name="reader", scopes=["snippets:read"]).client
    assert request_actor(request).label == "api_client:reader"


def test_an_anonymous_request_has_no_actor():
    request = RequestFactory().get("/")
    request.user = AnonymousUser()
    with pytest.raises(TypeError):
        request_actor(request)


def test_a_user_may_declassify_only_with_the_reclassify_permission(django_user_model):
    user = django_user_model.objects.create_user("bob", is_staff=True)
    assert Actor.of_user(user).may_declassify is False

    user.user_permissions.add(
        Permission.objects.get(content_type__app_label="governance", codename="reclassify")
    )
    user = django_user_model.objects.get(pk=user.pk)  # permissions are cached per user object

    assert Actor.of_user(user).may_declassify is True
