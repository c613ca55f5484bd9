"""Fetching skill sources (GitHub, local folder, zip archive) and applying what was fetched.

Fetchers (``github``, ``local``, ``archives``) read a source into a :class:`~skills.ingest.snapshot.Snapshot`
without touching the database; ``sync`` parses the snapshot and applies it in one transaction.
"""
