from django.apps import AppConfig


class SkillsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    # The admin's section title: one of its own, not its model's (a breadcrumb "Snippets > Snippets" reads twice).
    verbose_name = "Skills and their sources"
    name = "skills"

    def ready(self) -> None:
        # The tasks module imports models, so it can only be imported once they exist.
        import skills.tasks  # noqa: F401  (registers the sync task the services enqueue by name)
