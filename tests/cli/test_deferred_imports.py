"""`wisp.cli.deferred_imports`: a deferred standard module is absent until first used,
then is the one, complete module for everyone who holds it, loaded once even when
threads race for it. Each case runs in a fresh interpreter: deferral acts on
`sys.modules`, which this test process shares with everything else."""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.certificates import needs_openssl, self_signed
from tests.conftest import Runner
from wisp.testing import ScriptedServer, reply


def _run(code: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_a_deferred_module_loads_on_first_use_for_every_holder():
    seen = _run("""
        import json, sys, types
        from wisp.cli.deferred_imports import defer_unused_stdlib
        defer_unused_stdlib()
        import asyncio, importlib.util
        spec = importlib.util.find_spec("inspect")  # answered without loading it
        before = type(sys.modules["inspect"]).__name__
        import inspect
        def f(a, b=2): pass
        signature = str(inspect.signature(f))
        from inspect import getsource
        print(json.dumps({
            "before": before, "signature": signature,
            "plain": type(sys.modules["inspect"]) is types.ModuleType,
            "one_module": asyncio.coroutines.inspect is sys.modules["inspect"] is inspect,
            "complete": getsource is inspect.getsource and hasattr(inspect, "Parameter"),
            "file": inspect.__file__.endswith("inspect.py") and spec.origin == inspect.__file__,
            "coroutine_check": asyncio.iscoroutinefunction(asyncio.sleep),
        }))
    """)
    assert seen == {"before": "DeferredModule", "signature": "(a, b=2)", "plain": True,
                    "one_module": True, "complete": True, "file": True,
                    "coroutine_check": True}


def test_an_ssl_socket_check_needs_no_ssl_and_stays_true_after_it_loads():
    """asyncio asks every socket it connects whether it is an `ssl.SSLSocket`: before
    `ssl` loads nothing can be, so the answer (no) costs no load; the stand-in class read
    then answers as the real class once `ssl` has loaded, and subclassing it loads it."""
    seen = _run("""
        import json, socket, sys
        from wisp.cli.deferred_imports import defer_unused_stdlib
        defer_unused_stdlib()
        import asyncio, ssl
        held = ssl.SSLSocket
        plain = socket.socket()
        before = [isinstance(plain, held), issubclass(socket.socket, held),
                  type(sys.modules["ssl"]).__name__]
        class Mine(held):  # loads ssl: a real subclass of the real class
            pass
        wrapped = ssl.create_default_context().wrap_socket(socket.socket(),
                                                            server_hostname="x")
        print(json.dumps({
            "before": before,
            "subclass": issubclass(Mine, ssl.SSLSocket) and ssl.SSLSocket is not held,
            "after": [isinstance(wrapped, held), isinstance(plain, held),
                      isinstance(wrapped, ssl.SSLSocket), type(ssl).__name__],
            "one_module": asyncio.base_events.ssl is ssl is sys.modules["ssl"],
        }))
    """)
    assert seen == {"before": [False, False, "DeferredModule"], "subclass": True,
                    "after": [True, False, True, "module"], "one_module": True}


def test_threads_racing_for_a_deferred_module_all_get_it_loaded_once():
    seen = _run("""
        import json, sys, threading
        from wisp.cli.deferred_imports import defer_unused_stdlib
        defer_unused_stdlib()
        loads = []  # the module's code run: the import system exec()s it
        sys.addaudithook(lambda event, args: event == "exec" and getattr(
            args[0], "co_filename", "").endswith("inspect.py") and loads.append(1))
        import inspect
        start = threading.Barrier(8)
        answers, errors = [], []
        def read():
            start.wait()
            try:
                answers.append(inspect.isfunction(read))
            except Exception as exc:  # a half-built module: AttributeError
                errors.append(repr(exc))
        threads = [threading.Thread(target=read) for _ in range(8)]
        for t in threads: t.start()
        for t in threads: t.join()
        print(json.dumps({"answers": answers, "errors": errors,
                          "loads": len(loads)}))
    """)
    assert seen == {"answers": [True] * 8, "errors": [], "loads": 1}


def test_a_module_already_imported_is_left_alone():
    seen = _run("""
        import json, sys, inspect
        from wisp.cli.deferred_imports import defer_unused_stdlib
        defer_unused_stdlib()
        print(json.dumps({"same": sys.modules["inspect"] is inspect}))
    """)
    assert seen == {"same": True}


# Runs wisp's entry point and reports, last on stderr, what `inspect`, `ssl` and
# `ipaddress` were at the end: absent, a stand-in never used (DeferredModule) or loaded (module).
_REPORTING = """
import json, sys
from wisp.cli.main import main
code = main(sys.argv[1:])
sys.stdout.flush()
held = {name: sys.modules.get(name) for name in ("inspect", "ssl", "ipaddress")}
sys.stderr.write("\\n" + json.dumps({n: type(m).__name__ if m else None
                                     for n, m in held.items()}) + "\\n")
sys.exit(code)
"""


def _print_run(wisp: Runner, env: dict[str, str] | None = None) -> tuple[str, dict[str, str]]:
    """The result of `wisp -p hi` and what the deferrable modules were at its end."""
    done = subprocess.run(
        [sys.executable, "-c", _REPORTING, "-p", "hi", "--output-format", "stream-json",
         "--verbose"], cwd=wisp.cwd, env={**wisp.env, **(env or {})}, capture_output=True,
        text=True, timeout=60, check=False)
    frames = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0, done.stderr
    assert frames[-1]["type"] == "result" and frames[-1]["subtype"] == "success"
    return frames[-1]["result"], json.loads(done.stderr.splitlines()[-1])


def test_a_plain_http_print_run_loads_none_of_the_deferred_modules(wisp: Runner,
                                                                    server: ScriptedServer):
    """~17% of a `-p` run's instructions (docs/benchmarks.md)."""
    server.script(reply.text("ok"))
    assert _print_run(wisp) == ("ok", dict.fromkeys(("inspect", "ssl", "ipaddress"),
                                                   "DeferredModule"))


@needs_openssl
def test_a_print_run_over_https_loads_ssl_when_it_connects(tmp_path: Path):
    """The deferred `ssl` loads for the first TLS connection and verifies the server as
    ever: refused while the certificate is unknown, answered once it is trusted."""
    cert, key = self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    with ScriptedServer(reply.text("over tls"), tls=context) as tls_server:
        wisp = Runner(tls_server, tmp_path)
        assert wisp.env["ANTHROPIC_BASE_URL"].startswith("https://")
        refused = wisp("-p", "hi", env={"CLAUDE_CODE_MAX_RETRIES": "0"})
        assert refused.returncode == 1
        assert "certificate verify failed" in refused.stdout + refused.stderr
        said, held = _print_run(wisp, {"SSL_CERT_FILE": str(cert)})
    assert said == "over tls"
    assert held["ssl"] == "module"
