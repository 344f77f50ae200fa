"""Durable state of the session service: resources, each session's event log, leases and
the webhook outbox. `base.Store` is the contract; `sqlite.SqliteStore` the embedded
default, `postgres.PostgresStore` the scale-out one; `sql.SqlStore` the SQL they share,
spelled for each by a `sql.Dialect`."""
