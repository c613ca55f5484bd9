from django.apps import AppConfig


class ContextAssemblyConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "context_assembly"
