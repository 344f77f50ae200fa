"""The CLIs under test and the environment each one runs in.

Three variants:
- `wisp`: the console script with bytecode cached, as a pip-installed wheel has it (pip
  compiles .pyc files at install time).
- `wisp-src`: the same with every wisp module compiled from source on each run, as in this
  dev environment (editable install, PYTHONDONTWRITEBYTECODE=1).
- `reference`: Claude Code 2.1.332 from npm, with the offline environment of docs/protocol.md,
"Process behaviour".

Both wisp variants get their bytecode from a private PYTHONPYCACHEPREFIX under
.bench-cache/, so the bench never writes into src/ and what other engineers have left in
src/**/__pycache__ cannot change the figures.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".bench-cache"
WISP_BIN = ROOT / ".venv" / "bin" / "wisp"
REFERENCE_VERSION = "2.1.332"
REFERENCE_DIR = CACHE / "claude-code"
REFERENCE_BIN = REFERENCE_DIR / "node_modules" / ".bin" / "claude"
PYC_WARM = CACHE / "pycache-warm"  # stdlib, dependencies and wisp
PYC_SRC = CACHE / "pycache-src"  # stdlib and dependencies only: wisp compiles each run
# Where wisp's package is imported from. `--wisp-src DIR` points it at another tree (say a
# snapshot of the work tree, so edits in progress elsewhere cannot change the figures); it
# then goes first on the wisp variants' PYTHONPATH.
SRC = ROOT / "src"

WISP, WISP_SRC, REFERENCE = "wisp", "wisp-src", "reference"

# The offline invocation (no traffic but to the scripted server), applied to every CLI alike.
OFFLINE_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
}


@dataclass(frozen=True)
class Cli:
    name: str
    path: Path
    home: Path  # one HOME per CLI: the reference writes ~/.claude.json and transcripts
    extra_env: tuple[tuple[str, str], ...] = ()

    def env(self, base_url: str, *, bypass: bool = False) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "TERM": "dumb",
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "sk-ant-test",
            "CLAUDE_CODE_MAX_RETRIES": "1",  # a broken run should fail, not back off for minutes
            **OFFLINE_ENV,
            **dict(self.extra_env),
        }
        if bypass:
            env["IS_SANDBOX"] = "1"  # root may use bypassPermissions only in a sandbox
        return env


def make_clis(work: Path, reference: Path | None, with_src: bool) -> list[Cli]:
    """The variants to run; homes are fresh per bench invocation."""
    clis = [Cli(WISP, WISP_BIN, _home(work, WISP), _wisp_env(PYC_WARM, write=True))]
    if with_src:
        clis.append(Cli(WISP_SRC, WISP_BIN, _home(work, WISP_SRC), _wisp_env(PYC_SRC, False)))
    if reference is not None:
        clis.append(Cli(REFERENCE, reference, _home(work, REFERENCE)))
    return clis


def find_reference(explicit: str | None) -> Path | None:
    candidate = Path(explicit) if explicit else REFERENCE_BIN
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def install_reference() -> Path:
    """npm install the pinned reference into .bench-cache (npm warns EBADENGINE on Node 20;
    the runtime is a native binary, so that is harmless)."""
    REFERENCE_DIR.mkdir(parents=True, exist_ok=True)
    if not (REFERENCE_DIR / "package.json").exists():
        (REFERENCE_DIR / "package.json").write_text('{"private": true}\n')
    spec = f"@anthropic-ai/claude-code@{REFERENCE_VERSION}"
    npm = ["npm", "install", "--no-audit", "--no-fund", spec]
    subprocess.run(npm, cwd=REFERENCE_DIR, check=True)
    return REFERENCE_BIN


def reference_version(path: Path) -> str:
    out = subprocess.run([str(path), "--version"], capture_output=True, text=True, check=False)
    return out.stdout.strip()


def prepare_bytecode() -> None:
    """Fill the warm cache (compileall for wisp; stdlib and dependencies are filled by the
    warm-up runs, which may write), then derive the source-only cache from it without wisp."""
    PYC_WARM.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(PYC_WARM)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(SRC / "wisp")], env=env, check=True
    )


def refresh_src_cache() -> None:
    """PYC_SRC = PYC_WARM minus wisp's own modules (call after the warm-up runs)."""
    shutil.rmtree(PYC_SRC, ignore_errors=True)
    wisp_src = SRC / "wisp"
    skip = PYC_WARM / wisp_src.relative_to("/")
    shutil.copytree(
        PYC_WARM,
        PYC_SRC,
        ignore=lambda d, names: [skip.name] if Path(d) == skip.parent else [],
    )


def _wisp_env(prefix: Path, write: bool) -> tuple[tuple[str, str], ...]:
    pairs = [("PYTHONPYCACHEPREFIX", str(prefix))]
    if SRC != ROOT / "src":
        pairs.append(("PYTHONPATH", str(SRC)))
    if not write:
        pairs.append(("PYTHONDONTWRITEBYTECODE", "1"))
    return tuple(pairs)


def _home(work: Path, name: str) -> Path:
    home = work / "home" / name
    home.mkdir(parents=True, exist_ok=True)
    return home
