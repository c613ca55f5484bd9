"""Provider adapters: the narrow boundary between assembled context and a model's HTTP API.

A plain package (not an app) with no database access: the agents app builds a
:class:`~providers.values.ProviderConfig` from its ``Provider`` row and hands it in. Import from
the modules: ``values`` (configuration, calls, replies), ``streams`` (streamed deltas), ``failures``
(errors and their classes), ``base`` (the adapter contract), ``adapters`` (choosing an adapter, the pool
of open ones) and ``dispatch`` (retries and fallbacks).
"""
