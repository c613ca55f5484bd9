import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

from config.request_thread import asgi_application

# Django's application, whose streamed completions wait on their provider on the event loop and whose
# requests run their synchronous calls on a few shared threads (docs/decisions/0011-streaming.md).
application = asgi_application()

from config.startup import serving_started  # noqa: E402  (needs the settings the line above loads)

serving_started()
