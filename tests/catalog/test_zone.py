"""Zone of a call: the least trusted of the serving model's provider and one hop of fallbacks."""

from __future__ import annotations

import pytest

from catalog.models import Configuration, Provider
from catalog.selectors import configuration_fallbacks, configuration_zone
from governance.vocabulary import TrustZone
from tests.factories import configuration_make, model_make

pytestmark = pytest.mark.django_db


def test_zone_is_the_serving_models_provider_zone():
    configuration = configuration_make(zone=TrustZone.PRIVATE_HOSTED)
    assert configuration_zone(configuration) == TrustZone.PRIVATE_HOSTED


def test_a_less_trusted_fallback_widens_the_zone():
    configuration = configuration_make(
        zone=TrustZone.LOCAL, fallback_zones=(TrustZone.PRIVATE_HOSTED, TrustZone.EXTERNAL_EU)
    )
    assert configuration_zone(configuration) == TrustZone.EXTERNAL_EU


def test_a_more_trusted_fallback_does_not_narrow_the_zone():
    configuration = configuration_make(zone=TrustZone.EXTERNAL_EU, fallback_zones=(TrustZone.LOCAL,))
    assert configuration_zone(configuration) == TrustZone.EXTERNAL_EU


def test_serving_model_overrides_the_configured_model():
    configuration = configuration_make(zone=TrustZone.LOCAL)
    other = model_make(zone=TrustZone.EXTERNAL_GLOBAL)
    assert configuration_zone(configuration, serving_model=other) == TrustZone.EXTERNAL_GLOBAL


@pytest.mark.parametrize("stored", ["", "on_prem", "LOCAL"])
def test_unknown_or_empty_stored_zone_is_external_global(stored):
    configuration = configuration_make(zone=TrustZone.LOCAL)
    Provider.objects.filter(pk=configuration.model.provider_id).update(trust_zone=stored)
    configuration.refresh_from_db()
    assert configuration_zone(configuration) == TrustZone.EXTERNAL_GLOBAL


def test_unknown_fallback_zone_widens_to_external_global():
    configuration = configuration_make(zone=TrustZone.LOCAL, fallback_zones=(TrustZone.LOCAL,))
    fallback = configuration.fallback_links.get()
    Provider.objects.filter(pk=fallback.model.provider_id).update(trust_zone="")
    assert configuration_zone(configuration) == TrustZone.EXTERNAL_GLOBAL


def test_fallbacks_are_read_from_a_prefetch_without_a_query(django_assert_num_queries):
    made = configuration_make(zone=TrustZone.LOCAL, fallback_zones=(TrustZone.EXTERNAL_EU, TrustZone.LOCAL))
    expected = [link.model_id for link in made.fallback_links.order_by("position")]
    prefetched = Configuration.objects.prefetch_related("fallback_links__model__provider").get(pk=made.pk)
    with django_assert_num_queries(0):
        fallbacks = configuration_fallbacks(prefetched)
        zones = [model.provider.zone for model in fallbacks]
    assert [model.pk for model in fallbacks] == expected
    assert zones == [TrustZone.EXTERNAL_EU, TrustZone.LOCAL]


def test_fallbacks_without_a_prefetch_take_one_query_with_their_providers(django_assert_num_queries):
    made = configuration_make(zone=TrustZone.LOCAL, fallback_zones=(TrustZone.EXTERNAL_EU, TrustZone.LOCAL))
    plain = Configuration.objects.select_related("model__provider").get(pk=made.pk)
    with django_assert_num_queries(1):
        zones = [model.provider.zone for model in configuration_fallbacks(plain)]
        zone = configuration_zone(plain)  # the fallbacks read once are kept on the configuration
    assert zone == TrustZone.EXTERNAL_EU
    assert zones == [TrustZone.EXTERNAL_EU, TrustZone.LOCAL]
