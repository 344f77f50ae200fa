"""What a bench run says about itself: the commit it measured, and progress on stderr."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def git_head() -> str:
    """The commit, with "+changes" when src/ differs from it. Read-only plumbing only:
    rev-parse and diff-index never write the index or the work tree."""
    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=False)

    head = git("rev-parse", "--short", "HEAD").stdout.strip() or "unknown"
    dirty = git("diff-index", "--quiet", "HEAD", "--", "src").returncode == 1
    return f"{head}+changes" if dirty else head


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
