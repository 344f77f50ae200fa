"""How many everyday read-only commands the Bash judge allows without a prompt, and how
many of issue 25's damaging cases it refuses, in default mode with no rules.

    .venv/bin/python bench/judge_everyday.py
    PYTHONPATH=/path/to/other/checkout/src .venv/bin/python bench/judge_everyday.py

The second form measures another checkout's judge (before a change) on the same corpus.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.security.judge_cases import ALL, EVERYDAY, Scratch


def main() -> None:
    from wisp.permissions.engine import PermissionPolicy, evaluate
    from wisp.rules import Rule
    from wisp.tools.bash import Bash

    with tempfile.TemporaryDirectory() as root:
        scratch = Scratch(Path(root))
        tool = Bash()
        plain = PermissionPolicy(cwd=scratch.work, env=scratch.env())
        asked = [c for c in EVERYDAY
                 if evaluate(tool, {"command": c}, plain).behavior != "allow"]
        allowed = []
        for case in ALL:
            policy = PermissionPolicy(allow=[Rule.parse(r) for r in case.rules],
                                      cwd=scratch.work, env=scratch.env())
            if evaluate(tool, {"command": case.command}, policy).behavior == "allow":
                allowed.append(case.case)
    print(f"everyday corpus allowed without a prompt: {len(EVERYDAY) - len(asked)}"
          f"/{len(EVERYDAY)}")
    for command in asked:
        print(f"  asks: {command}")
    print(f"issue 25 damaging cases allowed: {len(allowed)}/{len(ALL)}")
    for case in allowed:
        print(f"  allowed: {case}")


if __name__ == "__main__":
    main()
