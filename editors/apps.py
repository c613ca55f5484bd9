from django.apps import AppConfig


class EditorsConfig(AppConfig):
    """What editors work in: the Django admin's pages for the catalogue and runs, the preview, the
    what-if, the dashboard, the readiness and cost pages, and the demo. It owns no models."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "editors"
