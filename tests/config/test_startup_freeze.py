"""A serving process sets its startup objects aside for the garbage collector once it is ready."""

from __future__ import annotations

import gc
import sys

from django.conf import settings

from config.startup import YOUNG_GENERATION_THRESHOLD, startup_objects_frozen


def test_the_url_configuration_is_imported_and_the_process_objects_frozen():
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    thresholds = gc.get_threshold()
    try:
        startup_objects_frozen()
        assert settings.ROOT_URLCONF in sys.modules
        # Everything the process held is set aside: the module objects among them.
        assert gc.get_freeze_count() > 10_000
        # The youngest generation is collected less often; the older ones as before.
        assert gc.get_threshold() == (YOUNG_GENERATION_THRESHOLD, *thresholds[1:])
        assert YOUNG_GENERATION_THRESHOLD == 10_000
    finally:
        gc.unfreeze()  # the test process goes on collecting as before
        gc.set_threshold(*thresholds)


def test_serving_processes_and_workers_freeze_after_their_other_hooks():
    assert settings.SERVING_STARTED_HOOKS[-1] == "config.startup.startup_objects_frozen"
    from celery.signals import worker_init

    import config.celery  # noqa: F401  (connects the worker's receiver)

    assert any("startup_objects_frozen" in repr(receiver) for _, receiver in worker_init.receivers)
