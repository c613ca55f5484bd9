"""The editors' admin: the catalogue, the context preview page, read-only run pages, the governance
readiness page, and the editors' dashboard on the admin index (editors/dashboard.py). Tool approvals,
MCP servers and evaluations are registered by their own apps' ``admin.py``.

Importing the submodules registers their model admins (admin autodiscovery imports this package).
"""

from django.contrib import admin

from editors.admin import catalog, events, readiness, runs, scores, what_if

PRODUCT_NAME = "Governed context assembly"

# The product's name in every admin page's header and title (the public AdminSite attributes).
admin.site.site_header = PRODUCT_NAME
admin.site.site_title = PRODUCT_NAME
admin.site.index_title = "Snippets, skills, configurations and runs"
admin.site.index_template = "admin/editors/index.html"
# "View site" opens the API's documentation: the service has no other site (its home, the dashboard,
# is the admin's index, where "Home" leads), and what consumer apps do with it is its API.
admin.site.site_url = "/api/docs/"

__all__ = ["catalog", "events", "readiness", "runs", "scores", "what_if"]
