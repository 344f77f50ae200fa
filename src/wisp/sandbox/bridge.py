"""The bridge: what makes the session's proxy reachable from inside a sandbox's empty
network namespace, and what keeps the command itself from Unix sockets.

Above: `NetworkGate`, which puts `argv(...)` in front of each sandboxed command and
`environment(...)` into its environment. Below: perl (always there on Debian and its
derivatives: perl-base is Essential) and the kernel.

One perl process per command does, in order:
1. listen on 127.0.0.1:3128 (HTTP proxy) and 127.0.0.1:1080 (SOCKS5) inside the
   namespace, before the command starts, so its first connection never races the bridge;
2. fork a relay that copies each accepted connection to the proxy's Unix socket, bound
   into the sandbox at `SOCKET`. It is made non-dumpable, so the command cannot read or
   write its memory, it lets go of the command's standard streams (so whoever reads the
   command's output sees its end when the command ends), and it dies with the command
   (PR_SET_PDEATHSIG; the command never waits for it, and a shell's `wait` does not
   see it);
3. install the command's seccomp program (the one that refuses `socket(AF_UNIX)`),
   which the relay does not have, and exec the command.

Why perl: a Python interpreter would cost 20-30 ms per command, and socat (the
reference's choice) cannot install a seccomp filter, so it would still need a second
helper or leave the command with AF_UNIX. perl starts in about 1-2 ms and does both with
its `syscall` builtin. The relay also checks every second that the command lives, and
ends at the latest with the sandbox's pid namespace.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping

__all__ = ["HTTP_PORT", "MOUNT", "SOCKET", "SOCKS_PORT", "argv", "environment", "perl"]

MOUNT = "/dev/wisp-net"  # under bubblewrap's own /dev, which is always writable at setup
SOCKET = f"{MOUNT}/proxy.sock"
HTTP_PORT = 3128
SOCKS_PORT = 1080

# argv: prctl number, hex seccomp program ("" for none), socket, ports..., --, command...
# prctl options: 1 PR_SET_PDEATHSIG, 4 PR_SET_DUMPABLE, 38 PR_SET_NO_NEW_PRIVS,
# 22 PR_SET_SECCOMP (2: a filter)
_SCRIPT = r"""
my ($nr, $hex, $path) = splice @ARGV, 0, 3;
my (@ports, @ls);
push @ports, shift @ARGV while @ARGV && $ARGV[0] ne '--';
shift @ARGV;
for my $port (@ports) {
  socket(my $l, 2, 1, 0) or die "wisp bridge: socket: $!\n";
  bind($l, pack('S n C4 x8', 2, $port, 127, 0, 0, 1))
    or die "wisp bridge: bind 127.0.0.1:$port: $!\n";
  listen($l, 128) or die "wisp bridge: listen: $!\n";
  push @ls, $l;
}
my $cmd = $$;
my $pid = fork // die "wisp bridge: fork: $!\n";
if (!$pid) {
  syscall($nr, 1, 9, 0, 0, 0);
  exit 0 if getppid() != $cmd;
  syscall($nr, 4, 0, 0, 0, 0);
  open STDIN, '<', '/dev/null';
  open STDOUT, '>', '/dev/null';
  open STDERR, '>', '/dev/null';
  relay();
  exit 0;
}
close $_ for @ls;
if (length $hex) {
  my $f = pack 'H*', $hex;
  syscall($nr, 38, 1, 0, 0, 0) == 0 or die "wisp bridge: no_new_privs: $!\n";
  syscall($nr, 22, 2, pack('S x6 P', length($f) / 8, $f), 0, 0) == 0
    or die "wisp bridge: seccomp: $!\n";
}
exec { $ARGV[0] } @ARGV or die "wisp bridge: $ARGV[0]: $!\n";
sub relay {
  $SIG{CHLD} = 'IGNORE';
  my $all = '';
  vec($all, fileno $_, 1) = 1 for @ls;
  while (kill 0, $cmd) {
    my $r = $all;
    next unless select($r, undef, undef, 1) > 0;
    for my $l (@ls) {
      next unless vec($r, fileno $l, 1);
      accept(my $c, $l) or next;
      my $p = fork;
      if (defined $p && !$p) { close $_ for @ls; copy($c); exit 0 }
      close $c;
    }
  }
}
sub copy {
  my ($c) = @_;
  socket(my $u, 1, 1, 0) or return;
  connect($u, pack('S a108', 1, $path)) or return;
  my @open = ([$c, $u], [$u, $c]);
  while (@open) {
    my $r = '';
    vec($r, fileno $_->[0], 1) = 1 for @open;
    select($r, undef, undef, undef) > 0 or next;
    for my $pair (@open) {
      my ($from, $to) = @$pair;
      next unless vec($r, fileno $from, 1);
      my $n = sysread($from, my $buf, 65536);
      if (!$n) { shutdown($to, 1); $pair->[2] = 1; next }
      for (my $off = 0; $off < $n;) {
        my $w = syswrite($to, $buf, $n - $off, $off);
        return unless defined $w;
        $off += $w;
      }
    }
    @open = grep { !$_->[2] } @open;
  }
}
"""


def perl() -> str | None:
    """The perl the bridge runs (the sandbox sees the host's /usr), or None."""
    return shutil.which("perl")


def argv(perl_path: str, prctl_nr: int, command_filter: bytes | None,
         inner: list[str]) -> list[str]:
    """The bridge in front of `inner`; `command_filter` is the command's own seccomp
    program, None when the command may create Unix sockets."""
    hexed = command_filter.hex() if command_filter is not None else ""
    return [perl_path, "-e", _SCRIPT, str(prctl_nr), hexed, SOCKET, str(HTTP_PORT),
            str(SOCKS_PORT), "--", *inner]


def environment() -> Mapping[str, str]:
    """Proxy variables for the command: HTTP(S) through the HTTP port, everything else
    through SOCKS5 with names resolved by the proxy (`socks5h`), loopback direct (it is
    the sandbox's own)."""
    http = f"http://127.0.0.1:{HTTP_PORT}"
    socks = f"socks5h://127.0.0.1:{SOCKS_PORT}"
    local = "localhost,127.0.0.1,::1"
    env = {"HTTP_PROXY": http, "HTTPS_PROXY": http, "http_proxy": http, "https_proxy": http,
           "ALL_PROXY": socks, "all_proxy": socks, "NO_PROXY": local, "no_proxy": local}
    ssh = _ssh_proxy_command()
    if ssh is not None:
        env["GIT_SSH_COMMAND"] = f"ssh -o ProxyCommand='{ssh}'"
    return env


def _ssh_proxy_command() -> str | None:
    """A ProxyCommand for git over ssh through the HTTP port, if a tool for it exists:
    socat, or OpenBSD netcat (the only nc with `-X connect`)."""
    if shutil.which("socat"):
        return f"socat - PROXY:127.0.0.1:%h:%p,proxyport={HTTP_PORT}"
    if shutil.which("nc.openbsd"):
        return f"nc.openbsd -X connect -x 127.0.0.1:{HTTP_PORT} %h %p"
    return None
