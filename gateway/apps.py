from django.apps import AppConfig


class GatewayConfig(AppConfig):
    """The consumer API: ``/api/v1/`` and the OpenAI-compatible ``/api/openai/v1/``, every entry point
    one more driver of the same governed call."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "gateway"
