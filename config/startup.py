"""What a serving process starts once it serves: each callable named in ``SERVING_STARTED_HOOKS``
(dotted paths, so apps above ``config`` add theirs without ``config`` importing them).

Called from ``config/wsgi.py`` and ``config/asgi.py``, the modules only a server imports: ``runserver``
loads its handler from them just before it serves (in the process that serves, not in the
autoreloader's parent), as does any WSGI or ASGI server. Tests (Django's test client builds its own
handler), migrations and the other management commands never import them, so they start nothing.
"""

from __future__ import annotations

from django.conf import settings
from django.utils.module_loading import import_string


def serving_started() -> None:
    for path in settings.SERVING_STARTED_HOOKS:
        import_string(path)()
