"""Provider adapters: the narrow boundary between assembled context and a model's HTTP API.

A plain package (not an app) with no database access: the agents app builds a
:class:`~agents.providers.base.ProviderConfig` from its ``Provider`` row and hands it in. Import from
the modules: ``base`` (the adapter contract, calls, replies, errors) and ``dispatch`` (choosing an
adapter, retries and fallbacks).
"""
