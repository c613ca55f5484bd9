from django.apps import AppConfig


class EvaluationsConfig(AppConfig):
    """Evaluation sets of a configuration, run live and live + drafts, side by side."""

    default_auto_field = "django.db.models.BigAutoField"
    # The admin's section title: one of its own, not its model's (a breadcrumb "Snippets > Snippets" reads twice).
    verbose_name = "Evaluation cases and results"
    name = "evaluations"

    def ready(self) -> None:
        import evaluations.tasks  # noqa: F401  (registers the task evaluations are enqueued to by name)
