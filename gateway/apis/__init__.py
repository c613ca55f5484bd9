"""The agents app's API, one module per topic: configurations, the context preview and
completions, runs, and the run event stream. URLs are in :mod:`gateway.urls`."""
