"""Issue 25: commands the shell judge once took for read-only (or rule-covered) while bash
ran code or touched files with them, by class, with real bash as the oracle.

A scratch folder holds `work/` (a git repository with a tracked, modified file `f`, a
script `x.sh` that creates the marker `m`, `d.json`) beside `outside/secret`. A case does
damage when, run unjudged by bash in `work/`, it changes anything in either folder or
prints the secret. `Scratch` builds the folder, measures damage and puts it back, so the
same folder serves a whole table (and a whole `wisp -p` session).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

SECRET = "TOPSECRET-25"
GIT = ("git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", "-c",
       "init.defaultBranch=main")


@dataclass(frozen=True)
class Case:
    """One command; `rules` are the allow rules it runs under (none: default mode)."""

    case: str
    cls: str
    command: str
    rules: tuple[str, ...] = ()


def _c(cls: str, rows: list[tuple[str, str]], rules: tuple[str, ...] = ()) -> list[Case]:
    return [Case(f"{cls}-{name}", cls, command, rules) for name, command in rows]


EVALUATED = _c("evaluated", [
    ("let", "let 'a[$(touch m)]'"),
    ("let-assign", "let 'x=a[$(touch m)]'"),
    ("double-paren-var", "x='a[$(touch m)]'; (( x ))"),
    ("dollar-double-paren", "x='a[$(touch m)]'; echo $((x))"),
    ("dollar-bracket", "x='a[$(touch m)]'; echo $[x]"),
    ("quoted-in-arith", "echo $(( 'a[$(touch m)]' ))"),
    ("substitution-in-arith", "echo $(( $(echo 'a[$(touch m)]') ))"),
    ("declare", "declare 'a[$(touch m)]=1'"),
    ("declare-array", "declare -a 'a=([$(touch m)]=1)'"),
    ("declare-integer", "declare -i x; x='a[$(touch m)]'"),
    ("declare-nameref", "declare -n r='a[$(touch m)]'; echo $r"),
    ("local", "f(){ local 'a[$(touch m)]=1'; }; f"),
    ("test-v", "test -v 'a[$(touch m)]'"),
    ("bracket-v", "[ -v 'a[$(touch m)]' ]"),
    ("double-bracket-v", "[[ -v 'a[$(touch m)]' ]]"),
    ("double-bracket-eq", "x='a[$(touch m)]'; [[ $x -eq 0 ]]"),
    ("double-bracket-eq-name", "x='a[$(touch m)]'; [[ x -eq 0 ]]"),
    ("printf-v", "printf -v 'a[$(touch m)]' x"),
    ("read", "read 'a[$(touch m)]' <<< x"),
    ("mapfile-callback", "mapfile -C 'touch m #' -c 1 a <<< x"),
    ("prompt-expansion", "x='$(touch m)'; echo ${x@P}"),
    ("indirection", "x='a[$(touch m)]'; echo ${!x}"),
    ("substring-offset", "x='a[$(touch m)]'; y=abc; echo ${y:x}"),
    ("subscript-length", "x='a[$(touch m)]'; a=(1); echo ${#a[$x]}"),
    ("element", "i='b[$(touch m)]'; echo ${a[$i]}"),
    ("assign-element", "i='b[$(touch m)]'; a[$i]=1"),
    ("unset", "a=(1); unset 'a[$(touch m)]'"),
    ("c-for", "x='a[$(touch m)]'; for ((i=x;0;)); do :; done"),
    ("ps4", "PS4='$(touch m)'; set -x; :"),
    ("ps4-read", "read PS4 <<< '$(touch m)'; set -x; :"),
    ("ps4-printf", "printf -v PS4 '$(touch m)'; set -x; :"),
    ("ps4-for", "for PS4 in '$(touch m)'; do set -x; :; done"),
    ("ps4-declare", "declare PS4='$(touch m)'; set -x; :"),
    ("bash-env", "export BASH_ENV=./x.sh; bash -c :"),
    ("prompt-command", "PROMPT_COMMAND='touch m' bash -i <<< ':'"),
    ("printf-v-quoted-name", "printf -v \"x\" '%s' 'a[$(touch m)]'; (( x ))"),
    ("read-quoted-name", "read \"x\" <<< 'a[$(touch m)]'; (( x ))"),
    ("default-assignment", ": ${x:='a[$(touch m)]'}; (( x ))"),
    ("value-names-variable", "y='a[$(touch m)]'; x=y; (( x ))"),
    ("positional", "f(){ echo $(( $1 )); }; f 'a[$(touch m)]'"),
    ("set-positional", "set -- 'a[$(touch m)]'; echo $(( $1 ))"),
    ("prefix-to-eval", "x='a[$(touch m)]' eval '(( x ))'"),
])

MINI_LANGUAGES = _c("minilang", [
    ("sed-w", "sed -n '1w out' f"),
    ("sed-s-w", "sed 's/x/y/w out' f"),
    ("sed-s-e", "sed 's/x/touch m/e' f"),
    ("sed-e", "sed '1e touch m' f"),
    ("sed-block-w", "sed -n '/x/{p;w out\n}' f"),
    ("sed-custom-delimiter-address", "sed -n '\\cxcw out' f"),
    ("sed-W", "sed -n 'h;W out' f"),
    ("sed-y-then-w", "sed -n 'y/x/y/;w out' f"),
    ("sed-comment-then-w", "sed -n '# note\nw out' f"),
    ("sed-second-expression", "sed -e p -e '$w out' f"),
    ("sed-r", "sed -n '1r ../outside/secret' f"),
    ("sed-R", "sed 'R ../outside/secret' f"),
    ("sed-newline-in-replacement", "sed 's/x/\\\n/w out' f"),
    ("sed-after-hold-commands", "sed '1!G;h;$!d;w out' f"),
    ("awk-division-then-redirect", "awk '{print $1/2 > \"out\"}' f"),
    ("awk-printf-redirect", "awk '{printf \"%s\", $0 > \"out\"}' f"),
    ("awk-redirect", "awk '{print > \"out\"}' f"),
    ("awk-append", "awk '{print $0 >> \"out\"}' f"),
    ("awk-pipe", "awk '{print | \"touch m\"}' f"),
    ("awk-system", "awk 'BEGIN{system(\"touch m\")}'"),
    ("awk-getline-command", "awk 'BEGIN{\"touch m\" | getline}'"),
    ("awk-getline-file", "awk 'BEGIN{while((getline l < \"../outside/secret\")>0) print l}'"),
    ("awk-argv", "awk 'BEGIN{ARGV[1]=\"../outside/secret\"; ARGC=2} {print}'"),
    ("awk-variable-file", "awk 'BEGIN{o=\"out\"; print \"x\" > o}'"),
    ("jq-rawfile", "jq --rawfile s ../outside/secret -n '$s'"),
    ("jq-slurpfile", "jq -n --slurpfile s ../outside/secret.json '$s'"),
    ("jq-file", "jq -R . ../outside/secret"),
    ("find-exec", "find . -name f -exec touch m \\;"),
    ("find-execdir", "find . -name f -execdir touch m \\;"),
    ("find-delete", "find . -name f -delete"),
    ("find-fprint", "find . -name f -fprint out"),
    ("find-fprint0", "find . -name f -fprint0 out"),
    ("find-fprintf", "find . -name f -fprintf out '%p'"),
    ("find-fls", "find . -name f -fls out"),
    ("git-c-alias", "git -c alias.q='!touch m' q"),
    ("git-c-fsmonitor", "git -c core.fsmonitor='touch m' status"),
    ("git-c-external", "git -c diff.external=./x.sh diff"),
    ("git-ext-diff", "git -c diff.external=./x.sh log -p --ext-diff -1"),
    ("git-alias", "git lg"),
    ("git-output", "git log --output=out -1"),
    ("git-blame-contents", "git blame --contents ../outside/secret f"),
    ("git-diff-no-index", "git diff --no-index ../outside/secret f"),
    ("git-diff-outside", "git diff ../outside/secret f"),
    ("sort-files0-stdin", "printf '../outside/secret\\0' | sort --files0-from=-"),
    ("sort-files0", "sort --files0-from=list0"),
])
# They read the files a list names (here the secret) but print only sizes and names, so
# no oracle shows it: judged, not run.
READS_WITHOUT_PRINTING = ["wc --files0-from=list0", "du --files0-from=list0",
                          "printf '../outside/secret\\0' | wc -c --files0-from=-",
                          "du --files0=list0", "wc --files0-f list0"]

# Every unambiguous prefix of a dangerous long option, in both forms.
SPELLINGS = _c("spelling", [
    *((f"sort-{p}-eq", f"sort --{p}=out f") for p in ("o", "ou", "out", "outp", "output")),
    *((f"sort-{p}-sep", f"sort --{p} out f") for p in ("o", "ou", "outpu")),
    *((f"sed-{p}", f"sed --{p} s/x/z/ f") for p in ("i", "in", "in-p", "in-place")),
    ("sed-in-place-suffix", "sed --in-pl=.bak s/x/z/ f"),
    *((f"sed-{p}", f"sed -n --{p}='1w out' f") for p in ("e", "ex", "expr")),
    ("git-output-sep", "git log --output out -1"),
    ("git-output-eq", "git diff --output=out"),
])

GIT_RULE = ("Bash(git:*)",)
ENVIRONMENT = [
    *_c("environment", [
        ("git-external-diff", "GIT_EXTERNAL_DIFF=./x.sh git diff"),
        ("git-config-env", "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.q "
                           "GIT_CONFIG_VALUE_0='!touch m' git q"),
        ("git-ssh-command", "GIT_SSH_COMMAND='touch m' git ls-remote ssh://h/r"),
        ("with-harmless-too", "LC_ALL=C GIT_EXTERNAL_DIFF=./x.sh git diff"),
        ("env-wrapper", "env GIT_EXTERNAL_DIFF=./x.sh git diff"),
        ("exported", "export GIT_EXTERNAL_DIFF=./x.sh; git diff"),
    ], GIT_RULE),
    *_c("environment", [("bash-env", "BASH_ENV=./x.sh bash -c :")], ("Bash(bash -c:*)",)),
    *_c("environment", [("default-mode", "GIT_EXTERNAL_DIFF=./x.sh git diff")]),
]

GRANTS = [
    *_c("grant", [("echo-redirect", "echo x > v.txt")], ("Bash(echo:*)",)),
    *_c("grant", [("git-redirect", "git log -1 > src.py")], GIT_RULE),
    *_c("grant", [("bare-read-outside", "cat ../outside/secret")], ("Read",)),
    *_c("grant", [("bare-edit-outside", "echo x > ../outside/v.txt")], ("Edit",)),
    *_c("grant", [("bare-write-outside", "cp f ../outside/copy")], ("Write", "Bash(cp:*)")),
]

CLASSES = {"evaluated": EVALUATED, "minilang": MINI_LANGUAGES, "spelling": SPELLINGS,
           "environment": ENVIRONMENT, "grant": GRANTS}
ALL = [case for cases in CLASSES.values() for case in cases]

# Everyday read-only commands: they must stay allowed without a prompt.
EVERYDAY = [
    "ls -la", "ls", "ls -1 src", "git status", "git status --short", "git log --oneline -5",
    "git log -3 --stat", "git diff", "git diff --stat HEAD~1", "git show HEAD --stat",
    "git branch -a", "git rev-parse --show-toplevel", "git ls-files", "git blame f",
    "grep -rn foo src", "grep -c x f", "rg foo", "sed -n 1,5p f", "sed 's/a/b/g' f",
    "awk '{print $1}' f", "awk -F: '$3 > 100 {print $1}' f", "awk 'NR==1' f",
    "jq .a d.json", "jq -r '.a' d.json", "find . -name '*.py'", "find . -type f -newer f",
    "sort f", "sort -u f | head", "wc -l f", "cat f", "head -20 f", "tail -n 5 f",
    "cut -d: -f1 f", "uniq -c f", "diff f f", "du -sh .", "df -h", "file f", "stat f",
    "echo hello", "pwd", "which git", "date +%s", "env", "printenv HOME",
    "for i in 1 2 3; do echo $((i*2)); done", "test -f f && cat f", "[[ -d src ]]",
    "LC_ALL=C sort f", "basename /a/b", "tr a-z A-Z < f", "seq 1 3", "md5sum f",
    "ls | wc -l", "git log --format='%h %s' -3", "cat f | grep x | sort | uniq",
    "git log --oneline --graph --all -20", "git diff --name-only", "git show HEAD:f",
    "grep -rn foo --include='*.py' .", "grep -E 'a|b' f", "ls -lah src/",
    "find . -maxdepth 2 -type d", "head -n 50 f", "cat -n f", "wc -c f", "sort -k2 -n f",
    "sort -t: -k3 -n f", "git log -p -1", "git remote -v", "git branch --show-current",
    "git tag -l", "git stash list", "jq '.a | tostring' d.json", "awk 'END{print NR}' f",
    "sed -n '/x/p' f", "sed -e 's/x/y/' -e 's/a/b/' f", "du -h --max-depth=1",
    "ls -la | grep foo", "git log --since='2 weeks ago' --author=me",
    "git diff HEAD~1 -- f", "cut -c1-10 f", "echo $HOME", "realpath f", "readlink -f f",
    "stat -c %s f", "sha256sum f", "file -b f", "od -c f | head", "comm -12 f f",
    "paste -sd, f", "nl f", "fold -w 80 f", "git rev-parse HEAD", "git ls-tree -r HEAD",
    "git describe --always", "git blame -L 1,2 f", "ls -t | head -5", "tail -20 f",
    "grep -rl TODO src | head", "find src -name '*.py' -newer f",
]


class Scratch:
    """`root/work` (a git repository) and `root/outside`, rebuilt in place after each
    command so a running process keeps its working directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.work = root / "work"
        self.outside = root / "outside"
        self.home = root / "home"
        for folder in (self.work, self.outside, self.home):
            folder.mkdir(parents=True, exist_ok=True)
        self._build()
        self.baseline = self.state()

    def env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home),
                "LANG": "C.UTF-8", "GIT_CONFIG_NOSYSTEM": "1", "TERM": "dumb"}

    def _git(self, *args: str) -> None:
        subprocess.run([*GIT, *args], cwd=self.work, env=self.env(), check=True,
                       capture_output=True)

    def _build(self) -> None:
        (self.work / "f").write_text("x\n")
        (self.work / "d.json").write_text('{"a": 1}\n')
        (self.work / "list0").write_text("../outside/secret\0")
        script = self.work / "x.sh"
        script.write_text("#!/bin/sh\ntouch m\n")
        script.chmod(0o755)
        (self.work / "src").mkdir(exist_ok=True)
        (self.work / "src" / "foo.py").write_text("foo = 1\n")
        self._git("init", "-q")
        self._git("add", ".")
        self._git("commit", "-qm", "init")
        self._git("config", "alias.lg", "!touch m")
        (self.work / "f").write_text("x\ny\n")  # a change for `git diff` to show
        (self.outside / "secret").write_text(SECRET + "\n")
        (self.outside / "secret.json").write_text(f'"{SECRET}"\n')

    def state(self) -> dict[str, bytes | None]:
        """Every file below both folders (not .git) and its content; None for folders."""
        seen: dict[str, bytes | None] = {}
        for folder in (self.work, self.outside):
            for path in sorted(folder.rglob("*")):
                relative = str(path.relative_to(self.root))
                if relative.startswith("work/.git"):
                    continue
                seen[relative] = None if path.is_dir() else path.read_bytes()
        return seen

    def damage(self, output: str = "") -> list[str]:
        """What changed since the baseline, and whether the secret was printed."""
        now = self.state()
        changed = [name for name in {*now, *self.baseline}
                   if now.get(name, b"?") != self.baseline.get(name, b"?")]
        return sorted(changed) + (["printed the secret"] if SECRET in output else [])

    def reset(self) -> None:
        for name in self.state():
            if name not in self.baseline:
                path = self.root / name
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
        for name, content in self.baseline.items():
            path = self.root / name
            if content is None:
                path.mkdir(parents=True, exist_ok=True)
            else:
                path.write_bytes(content)

    def run(self, command: str) -> list[str]:
        """Run `command` unjudged with bash in `work/`: the damage it did (then undone)."""
        proc = subprocess.run(["/bin/bash", "-c", command], cwd=self.work, env=self.env(),
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=10,
                              check=False, text=True, errors="replace")
        found = self.damage(proc.stdout + proc.stderr)
        self.reset()
        return found
