"""TODO"""

from __future__ import annotations

from catalog.models import ApiClient
from gateway.models import StoredResponse


def stored_response_get_for_client(*, api_client: ApiClient, response_id: str) -> StoredResponse | None:
    """The response ``response_id`` stored for ``api_client``, or None when it is unknown, another
    client's, or was never stored (``store: false``): the three read alike."""
    return StoredResponse.objects.filter(response_id=response_id, api_client=api_client).first()
