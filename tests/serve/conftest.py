"""Fixtures shared by the session-service tests: the throwaway PostgreSQL server
(`pg_server`, `dsn`) that tests/serve/pg and the store contract tests use."""

from tests.serve.pg_server import dsn, pg_server

__all__ = ["dsn", "pg_server"]
