"""The API's settings: request limits, rates, the proxies in front, DRF and the OpenAPI schema (read
by ``config/settings/base.py``; every variable is listed in ``.env.example``)."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from config.env import env_int, env_list, env_networks, env_rate

# --- API --------------------------------------------------------------------------------------
# A request body above this is refused with 413 before parsing (config.limits). The largest valid
# request is 50 context items and the input at 100,000 characters each, so the default leaves room.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("API_MAX_REQUEST_BYTES", 8 * 1024 * 1024, minimum=1024)
# Requests per API client, "<count>/<s|min|h|day>"; counted in the cache (Redis in the real mode).
API_RATE_LIMIT = env_rate("API_RATE_LIMIT", "600/min")
# Per client address: requests without a valid token, and those refused 401 or 403 permission_denied
# (config.throttling). Low, because a legitimate client needs none of them.
API_ANON_RATE_LIMIT = env_rate("API_ANON_RATE_LIMIT", "60/min")
# How many proxies in front of the service append to X-Forwarded-For. 0: the peer address is the
# client's, and the header (which any client can write) is ignored.
API_TRUSTED_PROXIES = env_int("API_TRUSTED_PROXIES", 0, minimum=0)
# The proxies' own addresses (networks): the header is read only from a peer in them, or from a Unix
# socket (config.client_address). Default: none, so a proxy count alone trusts no peer: a client that
# reaches the service directly, from this host or a private network, cannot write its own address
# (it would escape the admin login lockout). Name exactly the addresses your proxies connect from.
API_TRUSTED_PROXY_NETWORKS = env_networks("API_TRUSTED_PROXY_NETWORKS", [])
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.exception_handler.api_exception_handler",
    "DEFAULT_AUTHENTICATION_CLASSES": ["gateway.authentication.BearerTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["gateway.authentication.HasRequiredScope"],
    "DEFAULT_THROTTLE_CLASSES": [
        "gateway.authentication.ClientRateThrottle",
        "config.throttling.AddressRateThrottle",
    ],
    "DEFAULT_RENDERER_CLASSES": ["config.json_renderer.OrjsonRenderer"],
    # JSON only, nested at most config.limits.MAX_JSON_DEPTH levels.
    "DEFAULT_PARSER_CLASSES": ["config.limits.BoundedJSONParser"],
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Governed context assembly API",
    "DESCRIPTION": "Preview governed context, run completions and agent runs.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI assets are served from the installed sidecar package, never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "DataClassEnum": "governance.vocabulary.DataClass",
        "TrustZoneEnum": "governance.vocabulary.TrustZone",
        "RunStatusEnum": "agents.models.RunStatus",
        "StepStatusEnum": "agents.models.StepStatus",
        "EnforcementEnum": "governance.vocabulary.Enforcement",
        "NewSnippetEnforcementEnum": "snippets.apis.NEW_SNIPPET_ENFORCEMENT",
        "ScoreKindEnum": "gateway.models.scores.ScoreKind",
        "KindEnum": "skills.models.SkillSourceKind",  # the name it had before scores had a kind too
    },
}

# Images and PDFs in a caller's input (agents/runtime/media.py). Each part's bytes (inline base64, or
# fetched from an http(s) URL where the configuration allows remote media) are at most
# MEDIA_MAX_BYTES and of one of MEDIA_TYPES, checked against the bytes themselves. A fetch gives up
# after MEDIA_FETCH_TIMEOUT_SECONDS, follows no redirect and never reaches a loopback, private,
# link-local or reserved address, except inside MEDIA_FETCH_ALLOWED_NETWORKS (empty: none).
# The types the service can read (context_assembly/media.py sniffs exactly these).
KNOWN_MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf")
MEDIA_MAX_BYTES = env_int("MEDIA_MAX_BYTES", 10_485_760, minimum=1_024)
MEDIA_TYPES = env_list("MEDIA_TYPES", list(KNOWN_MEDIA_TYPES))
if unknown_media := sorted(set(MEDIA_TYPES) - set(KNOWN_MEDIA_TYPES)):
    raise ImproperlyConfigured(f"MEDIA_TYPES must list only {', '.join(KNOWN_MEDIA_TYPES)}: {unknown_media}")
MEDIA_FETCH_TIMEOUT_SECONDS = env_int("MEDIA_FETCH_TIMEOUT_SECONDS", 10, minimum=1)
MEDIA_FETCH_ALLOWED_NETWORKS = env_networks("MEDIA_FETCH_ALLOWED_NETWORKS", [])
