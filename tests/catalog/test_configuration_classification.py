"""A configuration's system prompt is classified: validation, and the database constraint behind it."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError

from catalog.models import Configuration
from governance.vocabulary import DataClass, Enforcement, TrustZone
from tests.factories import configuration_make, model_make

pytestmark = pytest.mark.django_db


def test_new_configuration_defaults_to_enforce():
    assert Configuration().system_prompt_enforcement == Enforcement.ENFORCE


def test_new_configuration_cannot_be_validated_without_a_class():
    configuration = Configuration(identifier="new", name="New", model=model_make(), system_prompt="Hi")
    with pytest.raises(ValidationError) as info:
        configuration.full_clean()
    assert info.value.message_dict["system_prompt_data_class"] == [
        "An enforced row must declare its data class."
    ]
    assert info.value.message_dict["system_prompt_ceiling"] == [
        "An enforced row must declare its trust-zone ceiling."
    ]
    assert Configuration.objects.count() == 0


def test_database_refuses_an_enforced_row_without_a_class():
    with pytest.raises(IntegrityError):
        Configuration.objects.create(identifier="raw", name="Raw", model=model_make(), system_prompt="Hi")


def test_ceiling_looser_than_the_class_is_a_validation_error():
    with pytest.raises(ValidationError) as info:
        configuration_make(
            system_prompt_data_class=DataClass.SECRET_ADJACENT, system_prompt_ceiling=TrustZone.PRIVATE_HOSTED
        )
    assert info.value.message_dict["system_prompt_ceiling"] == [
        "Ceiling 'private_hosted' is looser than data class 'secret_adjacent' allows (at most 'local')."
    ]
    assert Configuration.objects.count() == 0


def test_observe_row_may_stay_undeclared():
    configuration = configuration_make(
        system_prompt_data_class="", system_prompt_ceiling="", system_prompt_enforcement=Enforcement.OBSERVE
    )
    assert configuration.pk is not None
