"""What a serving process starts once it serves: each callable named in ``SERVING_STARTED_HOOKS``
(dotted paths, so apps above ``config`` add theirs without ``config`` importing them).

Called from ``config/wsgi.py`` and ``config/asgi.py``, the modules only a server imports: ``runserver``
loads its handler from them just before it serves (in the process that serves, not in the
autoreloader's parent), as does any WSGI or ASGI server. Tests (Django's test client builds its own
handler), migrations and the other management commands never import them, so they start nothing.
"""

from __future__ import annotations

import gc
from importlib import import_module

from django.conf import settings
from django.utils.module_loading import import_string


def serving_started() -> None:
    for path in settings.SERVING_STARTED_HOOKS:
        import_string(path)()


# Container objects allocated (net of those freed) between two collections of the youngest generation:
# Python's default is 700. A chat completion under uvicorn holds objects across its awaits and leaves
# reference cycles behind (about a hundred objects a request that only a collection frees), so at 700
# the youngest generation was collected about once a request and the older ones every few, each run
# walking whatever the requests in flight held. At 10,000 a completion executes 5-7% fewer instructions
# (docs/results.md, "Gateway"), for a few thousand objects' worth of garbage held a little longer.
YOUNG_GENERATION_THRESHOLD = 10_000


def startup_objects_frozen() -> None:
    """Set aside, for the garbage collector, every object the process holds once it is ready to serve.

    The URL configuration is imported first (and with it every view, serializer and service), then
    garbage is collected, then ``gc.freeze()`` moves the survivors (about 250,000 objects: modules,
    classes, functions, settings, caches' keys) out of the collector's generations. They live as long
    as the process; without this, every full collection walks them all again, which costs a request
    that meets one several milliseconds of CPU (docs/results.md, "Gateway"). The youngest generation
    is then collected every :data:`YOUNG_GENERATION_THRESHOLD` allocations instead of 700 (the older
    generations' thresholds stay). A server calls it through ``SERVING_STARTED_HOOKS``; a Celery
    worker when it starts (``config/celery.py``)."""
    import_module(settings.ROOT_URLCONF)
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, *gc.get_threshold()[1:])
