"""The tests of this folder need PostgreSQL: a throwaway server per test process and a
fresh database per test (the `pg_server` and `dsn` fixtures of tests/serve/pg_server.py,
registered by tests/serve/conftest.py). Without psycopg the whole folder is skipped; under
`WISP_REQUIRE_PG=1` (what `.ci/run` sets when it installed PostgreSQL) a missing part
fails it instead."""

from __future__ import annotations

import os

import pytest

if os.environ.get("WISP_REQUIRE_PG") == "1":
    import dbos  # noqa: F401  (fails the collection loudly when missing)
    import psycopg as _required  # noqa: F401

pytest.importorskip("psycopg",
                    reason="psycopg 3 is not installed (pip install 'psycopg[binary]')")
