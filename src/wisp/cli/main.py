"""Entry point. Kept import-light: `wisp --version` must not pay for the engine."""

from __future__ import annotations

import gc
import os
import sys


def _version_line() -> str:
    from wisp import PROTOCOL_VERSION, __version__

    return f"{__version__} (wisp; protocol {PROTOCOL_VERSION})"


def end_startup() -> None:
    """Collection back on, with everything built so far frozen: just re-enabling would
    make the first collection walk all of it (costing what disabling saved), and later
    full collections would keep re-walking it. The price is that the few hundred objects
    start-up leaves in garbage cycles are never freed."""
    gc.freeze()
    gc.enable()


def cache_bytecode_elsewhere() -> None:
    """Without bytecode, every run compiles wisp's modules again (~50 ms). pip compiles a
    wheel when installing it, and Python writes `__pycache__` next to the sources the
    first time, but a read-only package folder that was installed without bytecode (an
    uncompiled checkout, say) never gets any: keep it in the user's cache folder instead.
    Nothing changes when bytecode writing is off (PYTHONDONTWRITEBYTECODE), a cache prefix
    is already set, the folder is writable or it holds bytecode already."""
    tag = sys.implementation.cache_tag
    if sys.dont_write_bytecode or sys.pycache_prefix is not None or tag is None:
        return
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.access(package, os.W_OK) or os.path.exists(
            os.path.join(package, "__pycache__", f"__init__.{tag}.pyc")):
        return
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    sys.pycache_prefix = os.path.join(cache, "wisp", "pycache")


def main(argv: list[str] | None = None) -> int:  # noqa: PLR0911  (one return per way out)
    args_list = sys.argv[1:] if argv is None else argv
    if args_list in (["-v"], ["--version"]):
        sys.stdout.write(_version_line() + "\n")
        return 0
    cache_bytecode_elsewhere()  # before anything else is imported
    code = _subcommand(args_list)
    if code is not None:
        return code
    from wisp.cli.deferred_imports import defer_unused_stdlib

    defer_unused_stdlib()  # asyncio's TLS and introspection modules: loaded when first used
    # Start-up creates ~34,000 long-lived objects (modules, classes, dataclass methods), so
    # cyclic collections during it are pure cost: 43 of them, ~8 ms of a ~115 ms `-p` run.
    # Each entry point calls end_startup() once its engine is built; the `finally` below
    # covers every other way out.
    gc.disable()
    from wisp.errors import UsageError
    from wisp.launch.argv import parse_argv, usage_report
    from wisp.launch.options import build_options, validate

    try:
        args = parse_argv(args_list)
        if args.flag("version"):
            sys.stdout.write(_version_line() + "\n")
            return 0
        if args.flag("help"):
            return _help([])
        if args.flag("probe"):
            return _probe(args.get_str("model"), args.get_str("settings"))
        if args.unsupported:
            from wisp.launch.unsupported import warning

            sys.stderr.write(warning(args.unsupported) + "\n")
        prompt = " ".join(args.positionals) or None
        opts = build_options(args, prompt)
        validate(opts, os.environ)
        return _dispatch(opts)
    except UsageError as exc:
        sys.stderr.write(usage_report(exc) + "\n")
        return 1
    finally:
        gc.enable()  # for in-process callers, and any path that returns before an engine


def _subcommand(args_list: list[str]) -> int | None:
    """Run `serve`, `acp`, `sandbox` or `help` (None: the arguments are none of them)."""
    if args_list[:1] == ["serve"]:
        return _serve(args_list[1:])
    if args_list[:1] == ["acp"]:
        from wisp.acp.server import run_acp

        return run_acp(args_list[1:])
    if args_list[:1] == ["sandbox"]:
        from wisp.sandbox.report import run_check

        return run_check(args_list[1:])
    if args_list in (["help"], ["help", "serve"], ["-h"], ["--help"]):
        # Only a bare `help` is the command: `wisp -p help` and `wisp help me` are prompts.
        return _help(args_list[1:] if args_list[0] == "help" else [])
    return None


def _help(topic: list[str]) -> int:
    if topic == ["serve"]:
        return _serve(["--help"])
    from wisp.cli.help import HELP

    sys.stdout.write(HELP)
    return 0


def _serve(argv: list[str]) -> int:
    """`wisp serve …`: the session service (its own argv; see wisp.cli.serve)."""
    from wisp.cli.serve import run_serve

    return run_serve(argv)


def _probe(spec: str | None, settings_flag: str | None) -> int:
    """`wisp --probe --model <spec>`: what an OpenAI-compatible server can do."""
    from pathlib import Path

    from wisp.errors import UsageError
    from wisp.models.openai.probe import run_probe
    from wisp.runtime.facts import env_overlay
    from wisp.settings.loader import load_settings

    if not spec:
        raise UsageError("--probe needs --model <provider>:<model>, e.g. openai:gpt-4.1")
    settings = load_settings(Path.cwd(), os.environ, selected=None, flag=settings_flag)
    return run_probe(spec, env_overlay(os.environ, settings), settings.scalar("providers"))


def _dispatch(opts: object) -> int:
    from wisp.launch.options import Options

    assert isinstance(opts, Options)
    if opts.streaming_input:
        from wisp.cli.duplex import run_duplex

        return run_duplex(opts)
    if opts.print_mode or not sys.stdin.isatty():
        from wisp.cli.print_mode import run_print

        return run_print(opts)
    from wisp.cli.interactive import run_interactive

    return run_interactive(opts)
