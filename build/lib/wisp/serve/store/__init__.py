"""Durable state of the session service: resources, each session's event log, leases and
the webhook outbox. `base.Store` is the contract; `sqlite.SqliteStore` the embedded
default."""
