import os

from django.core.asgi import get_asgi_application

from config.request_thread import RequestThreads

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

# Django's own application; the completion views are async and wait on their provider on the event
# loop, and each request's synchronous calls run on a few threads shared by all requests
# (docs/decisions/0011-streaming.md).
application = RequestThreads(get_asgi_application())

from config.startup import serving_started  # noqa: E402  (needs the settings the line above loads)

serving_started()
