"""The agents app's admin: the catalogue, the context preview page, and read-only run pages.

Importing the submodules registers their model admins (admin autodiscovery imports this package).
"""

from agents.admin import catalog, runs

__all__ = ["catalog", "runs"]
