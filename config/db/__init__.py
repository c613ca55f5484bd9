"""Database backends of the service (config/db/postgresql: PostgreSQL with a pool that recovers)."""
