"""jsonschema stays off the plain `-p` path; it loads only when a schema is given."""

from __future__ import annotations

import subprocess

from tests.conftest import wisp_command
from wisp.testing import reply


def imported_modules(wisp, *args):
    proc = subprocess.run(
        [*wisp_command()[:1], "-X", "importtime", *wisp_command()[1:], *args],
        cwd=wisp.cwd,
        env=wisp.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }


def test_a_plain_run_does_not_import_jsonschema(wisp, server):
    server.script(reply.text("hi"))
    modules = imported_modules(wisp, "-p", "hi")
    assert "wisp.engine.loop" in modules  # the measurement did see the engine load
    assert not any(m.split(".")[0] == "jsonschema" for m in modules)


def test_a_schema_run_does(wisp, server):
    server.script(reply.tool_use("StructuredOutput", {"a": 1}))
    modules = imported_modules(wisp, "-p", "hi", "--json-schema", '{"type": "object"}')
    assert "jsonschema" in modules
