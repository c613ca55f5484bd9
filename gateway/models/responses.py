"""Responses kept for ``previous_response_id`` (``/api/openai/v1/responses``,
docs/decisions/0024-the-responses-api.md): who asked, the reply's labels, its usage, and the
conversation it ends, stored as it was sent (redacted)."""

from __future__ import annotations

from django.db import models

from catalog.models.clients import ApiClient
from catalog.models.configurations import Configuration
from governance.vocabulary import DataClass


class StoredResponse(models.Model):
    """One answered response a client may continue from. ``conversation`` is its whole chain in chat
    form, each entry ``{"message", "data_class", "receiver_class", "observed", "kind"}``: the caller's
    own messages (``kind`` ``caller``, at the class they were sent as) and the replies
    (``assistant_turn``, at their labels), this response's reply last. Instructions are not kept: a
    continuation brings its own, as OpenAI's API does."""

    response_id = models.CharField(max_length=64, unique=True)
    api_client = models.ForeignKey(ApiClient, on_delete=models.CASCADE, related_name="responses")
    configuration = models.ForeignKey(Configuration, on_delete=models.PROTECT, related_name="+")
    request_id = models.CharField(max_length=32)
    # The reply's label (the most sensitive class it was derived from), its label for the client,
    # and whether the label came from a row sent under observe.
    label = models.CharField(max_length=32, choices=DataClass.choices)
    receiver_label = models.CharField(max_length=32, choices=DataClass.choices)
    label_observed = models.BooleanField(default=False)
    conversation = models.JSONField(default=list)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        db_table = "agents_storedresponse"  # kept from before the split (decision 0031)
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"response {self.response_id}"
