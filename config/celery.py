"""The Celery application, configured from Django settings (``CELERY_*``)."""

import logging.config
import os
from typing import Any

from celery import Celery
from celery.signals import setup_logging, worker_init, worker_ready
from django.conf import settings

from config.tracing import tracing_configure
from config.worker_starts import worker_start_record

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
tracing_configure()  # when OTEL_TRACES_EXPORTER names an exporter (config/tracing.py)


@worker_init.connect
def _startup_objects_frozen(**kwargs: Any) -> None:
    """A worker sets its startup objects aside for the garbage collector, as a server does
    (config/startup.py); a pool's processes, forked after this, share them untouched."""
    from config.startup import startup_objects_frozen

    startup_objects_frozen()


@setup_logging.connect
def _log_as_the_web_does(**kwargs: Any) -> None:
    """Workers and beat log through Django's ``LOGGING`` (``LOG_FORMAT``, ``LOG_LEVEL``, the context
    fields) instead of Celery's own format; with a receiver here Celery leaves the root logger alone."""
    logging.config.dictConfig(settings.LOGGING)


@worker_ready.connect
def _start_recorded(sender: Any, **kwargs: Any) -> None:
    """A worker ready for tasks records its start (``config/worker_starts.py``): ``/healthz`` shows
    when the worker that answers its ping started, and how often it had started before."""
    worker_start_record(sender.hostname)
