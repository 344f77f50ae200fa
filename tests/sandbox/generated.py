"""Commands a model might run to get out, generated per language rather than listed.

Each `attempt(goal, language, target)` is one shell command line: inline code in python,
perl, node, awk or `sh -c` that tries to reach `target` (write a file, read one, connect
to a TCP port or a Unix socket, or leave a process running). The tests run every
combination through the real wisp and a real sandbox, and check the effect from outside
(the file, the listener, the host's process table), never only the command's output.
"""

from __future__ import annotations

import shlex
import shutil

LANGUAGES = ("python", "perl", "node", "awk", "sh")
GOALS = ("write", "read", "tcp", "unix", "linger")


def _python(code: str) -> str:
    return f"python3 -c {shlex.quote(code)}"


def _perl(code: str) -> str:
    return f"perl -e {shlex.quote(code)}"


def _node(code: str) -> str:
    return f"node -e {shlex.quote(code)}"


def _awk(program: str, *files: str) -> str:
    return " ".join(["awk", shlex.quote(program), *map(shlex.quote, files)])


def _sh(script: str) -> str:
    return f"sh -c {shlex.quote(script)}"


def _q(text: str) -> str:
    """A double-quoted string literal for python, perl, node and awk alike."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write(language: str, path: str, text: str) -> str:
    p, t = _q(path), _q(text)
    return {
        "python": _python(f"open({p}, 'w').write({t})"),
        "perl": _perl(f'open(my $f, ">", {p}) or die "$!: " . {p}; print $f {t};'),
        "node": _node(f"require('fs').writeFileSync({p}, {t})"),
        "awk": _awk(f"BEGIN {{ printf \"%s\", {t} > {p}; close({p}) }}"),
        "sh": _sh(f"printf %s {shlex.quote(text)} > {shlex.quote(path)}"),
    }[language]


def read(language: str, path: str) -> str:
    p = _q(path)
    return {
        "python": _python(f"print(open({p}).read())"),
        "perl": _perl(f'open(my $f, "<", {p}) or die "$!: " . {p}; print <$f>;'),
        "node": _node(f"process.stdout.write(require('fs').readFileSync({p}, 'utf8'))"),
        "awk": _awk("{ print }", path),
        "sh": _sh(f"cat {shlex.quote(path)}"),
    }[language]


def tcp(language: str, port: int) -> str:
    bash = f"echo escaped > /dev/tcp/127.0.0.1/{port}"
    return {
        "python": _python("import socket; s = socket.create_connection(('127.0.0.1', "
                          f"{port}), timeout=3); s.sendall(b'escaped')"),
        "perl": _perl("use IO::Socket::INET; my $s = IO::Socket::INET->new(PeerAddr => "
                      f"'127.0.0.1', PeerPort => {port}, Timeout => 3) or die \"connect: $!\";"
                      " print $s 'escaped';"),
        "node": _node(f"const s = require('net').connect({port}, '127.0.0.1', () => "
                      "s.end('escaped')); s.on('error', e => { console.error(e.message); "
                      "process.exit(1) })"),
        "awk": _awk(f"BEGIN {{ exit system(\"bash -c '{bash}'\") }}"),
        "sh": _sh(f"exec bash -c {shlex.quote(bash)}"),
    }[language]


def unix(language: str, path: str) -> str | None:
    p = _q(path)
    socat = shutil.which("socat")
    relay = f"socat - UNIX-CONNECT:{path} < /dev/null" if socat else None
    return {
        "python": _python("import socket; s = socket.socket(socket.AF_UNIX); "
                          f"s.connect({p}); s.sendall(b'escaped')"),
        "perl": _perl(f"use IO::Socket::UNIX; my $s = IO::Socket::UNIX->new(Peer => {p}) "
                      "or die \"connect: $!\"; print $s 'escaped';"),
        "node": _node(f"const s = require('net').connect({p}, () => s.end('escaped'));"
                      " s.on('error', e => { console.error(e.message); process.exit(1) })"),
        "awk": _awk(f"BEGIN {{ exit system(\"{relay}\") }}") if relay else None,
        "sh": _sh(relay) if relay else None,
    }[language]


def linger(language: str, marker: str) -> str:
    """Starts `sleep <marker>` detached (its own session, no parent to wait for it)."""
    return {
        "python": _python("import subprocess; subprocess.Popen(['sleep', "
                          f"{_q(marker)}], start_new_session=True)"),
        "perl": _perl("use POSIX qw(setsid); if (fork() == 0) { setsid(); "
                      f"exec('sleep', {_q(marker)}) }}"),
        "node": _node(f"require('child_process').spawn('sleep', [{_q(marker)}], "
                      "{detached: true, stdio: 'ignore'}).unref()"),
        "awk": _awk(f"BEGIN {{ system(\"setsid nohup sleep {marker} > /dev/null 2>&1 &\") }}"),
        "sh": _sh(f"setsid nohup sleep {marker} > /dev/null 2>&1 &"),
    }[language]


def available(language: str) -> bool:
    program = {"python": "python3", "sh": "sh"}.get(language, language)
    return shutil.which(program) is not None
