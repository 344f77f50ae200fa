"""What a Bash permission judgement costs: the one-time grammar load, then per call.

    .venv/bin/python bench/judge.py [--n 2000]

Runs in fresh interpreters so the first judgement pays the real load (tree-sitter and the
bash grammar are imported on the first Bash judgement, never at start-up). The per-call
figure is the median over a corpus of everyday and hostile commands, judged under rules
that force the full path: deny and allow rules, file rules, the working-folder boundary.
The target in issue 9 is ≤ 2 ms per call.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile

CORPUS = [
    "ls -la",
    "git status",
    "git log --oneline -5 | head -3",
    "npm run test -- --watch=false",
    "cd sub && rm -rf build/ dist/",
    "find . -name '*.py' -exec grep -l TODO {} +",
    "python -m pytest -q tests/ 2>&1 | tail -20",
    "for f in *.txt; do wc -l \"$f\"; done",
    "echo $'\\'' ; rm v.txt #'",
    "X=rm; $X f",
    "bash -c 'timeout 5 nice env FOO=1 rm -f victim'",
    "cat <<'EOF' > notes.md\nhello\nEOF",
    "grep -rn 'password' ~/.ssh 2>/dev/null || true",
    "sed -i 's/a/b/' src/*.py && git diff --stat",
]

_CHILD = r"""
import json, os, statistics, sys, time
from pathlib import Path
t0 = time.perf_counter()
from wisp.permissions.engine import PermissionPolicy, evaluate
from wisp.rules import Rule
from wisp.tools.bash import Bash
corpus, n, cwd = json.loads(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
policy = PermissionPolicy(
    mode="default", cwd=cwd,
    deny=[Rule.parse("Bash(rm:*)"), Rule.parse("Read(./secret/**)"), Rule.parse("Edit(./.env)")],
    allow=[Rule.parse("Bash(git:*)"), Rule.parse("Bash(npm run test:*)"), Rule.parse("Bash(ls:*)")],
)
tool = Bash()
t1 = time.perf_counter()
evaluate(tool, {"command": corpus[0]}, policy)
first = time.perf_counter() - t1
per_call = []
for i in range(n):
    command = corpus[i % len(corpus)]
    t = time.perf_counter()
    evaluate(tool, {"command": command}, policy)
    per_call.append(time.perf_counter() - t)
print(json.dumps({"import_engine_ms": (t1 - t0) * 1000, "first_judgement_ms": first * 1000,
                  "per_call_median_ms": statistics.median(per_call) * 1000,
                  "per_call_p95_ms": sorted(per_call)[int(0.95 * len(per_call))] * 1000,
                  "per_call_max_ms": max(per_call) * 1000}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000, help="judgements per run")
    parser.add_argument("--runs", type=int, default=5, help="fresh interpreters")
    args = parser.parse_args()
    samples = []
    with tempfile.TemporaryDirectory() as cwd:
        for _ in range(args.runs):
            out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(CORPUS), str(args.n),
                                  cwd], capture_output=True, text=True, check=True)
            samples.append(json.loads(out.stdout))
    print("| measure | median of runs |\n|---|---|")
    for key in samples[0]:
        value = statistics.median(s[key] for s in samples)
        print(f"| {key.replace('_', ' ')} | {value:.3f} |")
    print(f"\n{args.runs} fresh interpreters × {args.n} judgements over {len(CORPUS)} commands")


if __name__ == "__main__":
    main()
