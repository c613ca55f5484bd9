from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from config.health import healthz
from config.metrics import metrics

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics, name="metrics"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/v1/", include("snippets.urls")),
    path("api/v1/", include("skills.urls")),
    path("api/v1/", include("gateway.urls")),
    path("api/openai/v1/", include("gateway.openai_urls")),
    path("api/anthropic/v1/", include("gateway.anthropic_urls")),
]
