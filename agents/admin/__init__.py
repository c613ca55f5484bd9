"""The agents app's admin: the catalogue, the context preview page, read-only run pages and the
governance readiness page.

Importing the submodules registers their model admins (admin autodiscovery imports this package).
"""

from agents.admin import catalog, readiness, runs

__all__ = ["catalog", "readiness", "runs"]
