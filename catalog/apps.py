from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CatalogConfig(AppConfig):
    """The catalogue: providers, their models, configurations, and the API clients granted them."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "catalog"

    def ready(self) -> None:
        # Imported once the models exist (see AgentsConfig.ready).
        from catalog.receivers import catalog_version_ensure

        post_migrate.connect(catalog_version_ensure, sender=self, dispatch_uid="catalog.catalog_version")
