from django.apps import AppConfig


class SnippetsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    # The admin's section title: one of its own, not its model's (a breadcrumb "Snippets > Snippets" reads twice).
    verbose_name = "Snippets and tags"
    name = "snippets"
