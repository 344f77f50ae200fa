"""`wisp serve`: the Managed Agents session service (`wisp.serve`).

    wisp serve [--host 127.0.0.1] [--port 0] [--store sqlite:PATH|postgresql://…]
               [--role all|api|worker] [--data-dir DIR] [per-session limits]

Prints `wisp serve: listening on http://HOST:PORT` once it accepts connections. The
model backend comes from this process's environment and settings, as for the CLI.
Clients authenticate with one of `WISP_SERVE_API_KEYS` (comma-separated); without keys
only a loopback host is allowed. SIGTERM (or SIGINT) drains: no new work is taken,
running turns get `--drain` seconds to finish, and what is still running is left in the
store for the next start (or another worker) to resume.

With `--store postgresql://…` turns run as DBOS durable workflows (`wisp.serve.durable`),
and processes may split the work: `--role api` serves HTTP, `--role worker` runs turns,
`--role all` (the default) both. A worker prints `wisp serve: worker NAME ready`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wisp.argparsing import StrictParser
from wisp.errors import UsageError
from wisp.ports import bind_error, listen_failure

if TYPE_CHECKING:
    from wisp.serve.containment import Housing
    from wisp.serve.store.base import Store


_DESCRIPTION = """\
Serve the Managed Agents API (agents, environments, sessions, events) over HTTP.
Prints `wisp serve: listening on http://HOST:PORT` once it accepts connections."""

_EPILOG = """\
The model backend comes from this process's environment and settings, as for `wisp -p`.
Clients authenticate with one of WISP_SERVE_API_KEYS (comma-separated); without keys
only a loopback --host is allowed. SIGTERM or SIGINT drains: running turns get --drain
seconds, and what is still running resumes on the next start.

examples:
  wisp serve                                 a free port on 127.0.0.1, printed at start
  wisp serve --port 8080                     a fixed port
  wisp serve --store postgresql://db/wisp --role api     (and --role worker elsewhere)"""


def _parser() -> StrictParser:
    parser = StrictParser(prog="wisp serve", description=_DESCRIPTION, epilog=_EPILOG)
    parser.add_argument("--host", default="127.0.0.1", help="default: 127.0.0.1")
    parser.add_argument("--port", type=int, default=0,
                        help="default 0: any free port (the URL is printed)")
    parser.add_argument("--store", default=None,
                        help="sqlite:PATH (default: <config dir>/serve/wisp.db) or "
                             "postgresql://…")
    parser.add_argument("--data-dir", default=None,
                        help="where session workspaces live (default: "
                             "$XDG_DATA_HOME/wisp/serve, else ~/.local/share/wisp/serve)")
    parser.add_argument("--drain", type=float, default=30.0,
                        help="seconds running turns get to finish on SIGTERM")
    parser.add_argument("--poll", type=float, default=1.0,
                        help="seconds between looks for work queued by other processes")
    parser.add_argument("--role", choices=("all", "api", "worker"), default="all",
                        help="with a PostgreSQL store: serve HTTP (api), run turns "
                             "(worker), or both (all)")
    limits = parser.add_argument_group(
        "per-session limits", "every command of a session runs in its own sandbox; "
        "these bound what one session can take from the others")
    limits.add_argument("--session-processes", type=_positive(int), default=256,
                        help="processes at once (default 256)")
    limits.add_argument("--session-memory-mb", type=_positive(int), default=2048,
                        help="memory of all its commands, MB (default 2048)")
    limits.add_argument("--session-cpus", type=_positive(float), default=1.0,
                        help="CPUs its commands may use together (default 1)")
    limits.add_argument("--command-cpu-seconds", type=_positive(int), default=600,
                        help="CPU seconds per process of a command (default 600)")
    limits.add_argument("--command-file-mb", type=_positive(int), default=1024,
                        help="size of any one file a command writes, MB (default 1024)")
    return parser


def _positive(kind: type[int] | type[float]) -> Any:
    def parse(text: str) -> int | float:
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, not {text}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its error
    return parse


def store_path(spec: str | None, env: dict[str, str]) -> Path | str:
    """A SQLite file's path, or a PostgreSQL URL (kept as given)."""
    from wisp.paths import config_dir

    if spec is None:
        return config_dir(env) / "serve" / "wisp.db"
    kind, _, rest = spec.partition(":")
    if kind == "sqlite" and rest:
        return Path(rest).expanduser()
    if kind in ("postgresql", "postgres") and rest.startswith("//"):
        return spec
    raise UsageError(f"--store must be sqlite:PATH or postgresql://…, not {spec!r}")


def open_store(where: Path | str) -> Store:
    """SQLite (embedded, the default) or PostgreSQL (psycopg, loaded only then)."""
    if isinstance(where, str):
        from wisp.serve.store.postgres import PostgresStore

        return PostgresStore(where)
    from wisp.serve.store.sqlite import SqliteStore

    where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return SqliteStore(where)


def run_serve(argv: list[str]) -> int:
    args = _parser().parse_strict(argv)
    env = dict(os.environ)
    try:
        path = store_path(args.store, env)
        if args.role != "all" and not isinstance(path, str):
            raise UsageError("--role api and --role worker need a postgresql:// --store: "
                             "processes share work through PostgreSQL")
    except UsageError as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return 1
    # A busy port is found before the store is opened or a worker started.
    busy = None if args.role == "worker" else bind_error(args.host, args.port)
    if busy is not None:
        return _cannot_listen(args, busy)
    try:
        if isinstance(path, str):
            return asyncio.run(_serve_scaled(args, env, path))
        return asyncio.run(_serve(args, env, path))
    except UsageError as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return 1
    except OSError as exc:  # taken between the check and the bind
        return _cannot_listen(args, exc)


def _cannot_listen(args: argparse.Namespace, exc: OSError) -> int:
    line = listen_failure("wisp serve", args.host, args.port, exc)
    if line is None:
        raise exc
    sys.stderr.write(line + "\n")
    return 1


def default_data_dir(env: dict[str, str]) -> Path:
    """Workspaces live in a data folder of their own, never under a configuration folder
    (whose protected paths would refuse every write a session makes)."""
    base = env.get("XDG_DATA_HOME") or os.path.join(
        env.get("HOME") or os.path.expanduser("~"), ".local", "share")
    return Path(base) / "wisp" / "serve"


def _housing(args: argparse.Namespace, env: dict[str, str], store: Path | str) -> Housing:
    from wisp.serve.containment import Housing, ServeLimits

    data_dir = Path(args.data_dir).expanduser() if args.data_dir else default_data_dir(env)
    limits = ServeLimits(processes=args.session_processes, memory_mb=args.session_memory_mb,
                         cpus=args.session_cpus, command_cpu_seconds=args.command_cpu_seconds,
                         file_mb=args.command_file_mb)
    return Housing(data_dir.absolute(), limits=limits,
                   store_file=str(store.absolute()) if isinstance(store, Path) else None)


async def _serve(args: argparse.Namespace, env: dict[str, str], path: Path | str) -> int:
    from wisp.serve.app import Api
    from wisp.serve.auth import ApiKeys
    from wisp.serve.deployments import Scheduler
    from wisp.serve.http import Server
    from wisp.serve.session_log import Fanout
    from wisp.serve.webhooks import Deliverer
    from wisp.serve.worker import Worker

    store = open_store(path)
    fanout = Fanout()
    housing = _housing(args, env, path)
    worker = Worker(store, fanout, env=env, housing=housing, poll_s=args.poll)
    api = Api(store, fanout, worker, files_dir=housing.data_dir / "files")
    server = Server(api.router, args.host, args.port, ApiKeys.from_env(env))
    await server.start()
    worker.start()
    scheduler = Scheduler(store, api.start_session, env=env)
    scheduler.start()
    # Every process sends the shared outbox (claims keep two from sending one delivery).
    deliverer = Deliverer(store, env=env, poll_s=args.poll)
    deliverer.start()
    _ready(f"listening on {server.url}")
    await _stopped()
    await scheduler.close()
    await worker.drain(args.drain)
    await server.close(drain_s=2.0)
    await worker.close()
    await deliverer.close()
    store.close()
    _end_children()
    return 0


async def _serve_scaled(args: argparse.Namespace, env: dict[str, str], dsn: str) -> int:
    """PostgreSQL: turns are DBOS workflows (`wisp.serve.durable`), run by this process
    (role all, worker) and/or started by its API (all, api). One LISTEN connection wakes
    this process's SSE streams and running turns on other processes' writes."""
    from wisp.serve.durable.processes import Scaled

    scaled = Scaled(args.role, dsn, env=env, housing=_housing(args, env, dsn),
                    poll_s=args.poll)
    await scaled.start(args.host, args.port)
    _ready(f"listening on {scaled.url}" if scaled.url else f"worker {scaled.name} ready")
    await _stopped()
    await scaled.close(args.drain)
    _end_children()
    return 0


def _ready(what: str) -> None:
    sys.stdout.write(f"wisp serve: {what}\n")
    sys.stdout.flush()


async def _stopped() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


def _end_children() -> None:
    from wisp.tools.reaper import end_all_processes

    end_all_processes()
