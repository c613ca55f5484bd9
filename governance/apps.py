from django.apps import AppConfig


class GovernanceConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "governance"

    def ready(self) -> None:
        import config.checks  # noqa: F401  (registers the settings' system checks)
