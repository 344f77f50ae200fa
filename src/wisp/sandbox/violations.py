"""What a sandboxed command was refused, told to the model and the user.

Above: the Bash tool, which appends `note(...)` to the result of a failed sandboxed
command. Below: the command's own error output, read for the paths it names next to an
error (each path is then checked against the sandbox's view: outside the writable
folders, hidden, or protected), and the hosts the network gate refused.

This only reports. It never decides anything: the sandbox holds whether or not a refusal
is recognised here, and a program that prints nothing is refused just the same.
`ignoreViolations` leaves matching reports out: `{"file": [...], "network": [...]}` (by
kind) or, as the SDKs type it, `{"<command substring or *>": [<violation substrings>]}`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence

from wisp.sandbox.view import inside

# Plain substrings of a lower-cased line: a regex alternation of these costs ~8 ms to
# compile, paid by the first sandboxed command of every session.
_FS_ERRORS = ("read-only file system", "erofs", "permission denied", "eacces",
              "operation not permitted", "eperm", "no such file or directory", "enoent",
              "not a directory", "enotdir", "file exists", "eexist", "cannot open",
              "cannot create", "cannot touch", "cannot write", "can't open", "can't create")
_NET_ERRORS = ("connection refused", "econnrefused", "network is unreachable", "enetunreach",
               "could not resolve", "temporary failure in name resolution",
               "name or service not known", "getaddrinfo", "no address associated",
               "couldn't connect")
_READ_ONLY = ("read-only file system", "erofs")
# Landlock refuses a write outside the allowed folders with EACCES, not EROFS.
_DENIED = ("permission denied", "eacces")
_QUOTED = re.compile(r"'([^'\n]+)'|\"([^\"\n]+)\"|‘([^’\n]+)’")
_BARE_PATH = re.compile(r"(?<![\w.~/-])((?:/|\./|\.\./)[\w.@+,=~/-]+|\.[\w.-]+(?:/[\w.@+-]+)*)")
_HOST = re.compile(r"(?:resolve host:?|host '|connect to |getaddrinfo \w+ )\s*"
                   r"([\w.-]+\.[a-zA-Z]{2,})", re.IGNORECASE)
_MAX_REPORTED = 10


class View:
    """The parts of a command's sandbox that a refusal can be measured against."""

    __slots__ = ("cwd", "hidden", "landlock", "readonly", "writable")

    def __init__(self, cwd: str, writable: Sequence[str], hidden: Sequence[str],
                 readonly: Sequence[str], *, landlock: bool = False) -> None:
        self.cwd = cwd
        self.landlock = landlock
        self.writable = tuple(os.path.realpath(p) for p in writable)
        self.hidden = tuple(hidden)
        self.readonly = tuple(readonly)

    def classify(self, raw: str, line: str) -> str | None:
        path = os.path.realpath(os.path.join(self.cwd, os.path.expanduser(raw)))
        if inside(path, self.readonly):
            return f"{path}: protected, read-only in the sandbox"
        lowered = line.lower()
        writing = any(e in lowered for e in _READ_ONLY) or (
            self.landlock and any(e in lowered for e in _DENIED))
        if writing and not inside(path, self.writable):
            return f"{path}: outside the folders the sandbox may write"
        if inside(path, self.hidden):
            return f"{path}: hidden in the sandbox (masked)"
        return None


def file_violations(output: str, view: View) -> list[str]:
    found: list[str] = []
    for line in output.splitlines():
        lowered = line.lower()
        if not any(e in lowered for e in _FS_ERRORS):
            continue
        for candidate in _paths_in(line):
            report = view.classify(candidate, line)
            if report is not None and report not in found:
                found.append(report)
        if any(e in lowered for e in _READ_ONLY) and not any(_paths_in(line)):
            found.append("a write outside the folders the sandbox may write (read-only file "
                         "system)")
    return found[:_MAX_REPORTED]


# "bash: line 1: ", "/bin/sh: 1: ", "touch: ": the program reporting, not what it touched.
_REPORTER = re.compile(r"^\s*[^\s:'\"]+: (?:line )?(?:\d+: )?")


def _paths_in(line: str) -> list[str]:
    line = _REPORTER.sub("", line, count=1)
    quoted = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(line)]
    bare = _BARE_PATH.findall(_QUOTED.sub(" ", line))
    return [p for p in dict.fromkeys((*quoted, *bare)) if "/" in p or p.startswith(".")]


def network_violations(output: str, refused_hosts: Iterable[str]) -> list[str]:
    found = [f"{host}: network access refused by the sandbox" for host in refused_hosts]
    for line in output.splitlines():
        if not any(e in line.lower() for e in _NET_ERRORS):
            continue
        host = _HOST.search(line)
        report = (f"{host.group(1)}: network access refused by the sandbox" if host else
                  "network access: the sandbox has no route out for this connection")
        if report not in found:
            found.append(report)
    return found[:_MAX_REPORTED]


def unignored(command: str, kind: str, reports: list[str],
              ignore: Mapping[str, Sequence[str]]) -> list[str]:
    """`reports` minus what `ignoreViolations` leaves unreported (see the module doc)."""
    texts = [*ignore.get(kind, ())]
    for pattern, values in ignore.items():
        if pattern not in ("file", "network") and (pattern == "*" or pattern in command):
            texts += values
    return [r for r in reports if not any(t and t in r for t in texts)]


def note(reports: Sequence[str]) -> str:
    """The block appended to the tool result (the reference's tag)."""
    body = "\n".join(reports)
    return f"<sandbox_violations>\n{body}\n</sandbox_violations>"
