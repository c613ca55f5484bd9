import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

from config.request_thread import asgi_application

# Django's handler with its middleware chain and view run as one call on a few threads shared by all
# requests; the completion views' answers wait on their provider on the event loop
# (config/request_thread.py, docs/decisions/0011-streaming.md).
application = asgi_application(serving=True)

from config.startup import serving_started  # noqa: E402  (needs the settings the line above loads)

serving_started()
