import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

# Django's application: the completion views are async and wait on their provider on the event loop
# (docs/decisions/0011-streaming.md).
application = get_asgi_application()

from config.startup import serving_started  # noqa: E402  (needs the settings the line above loads)

serving_started()
