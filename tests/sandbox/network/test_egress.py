"""Egress from inside bubblewrap through the bridge and the session's proxy: allowed
names reach a local upstream by HTTP (absolute URI), CONNECT and SOCKS5 from curl and
Python; everything else is refused, reported, and never looked up."""

from __future__ import annotations

import hashlib
import sys

from tests.sandbox.network.conftest import Gates
from tests.sandbox.network.helpers import Jailer, Resolver, Upstream, UserSocksProxy, pattern

PY = [sys.executable, "-I", "-c"]

# Python inside the sandbox: a CONNECT tunnel (http.client) and a SOCKS5 session by hand.
CONNECT_CLIENT = """
import http.client, sys
conn = http.client.HTTPConnection("127.0.0.1", 3128, timeout=20)
conn.set_tunnel(sys.argv[1], int(sys.argv[2]))
conn.request("GET", "/via-connect")
print(conn.getresponse().read().decode(), end="")
"""
SOCKS_CLIENT = """
import socket, sys
host, port = sys.argv[1].encode(), int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", 1080), timeout=20)
s.sendall(b"\\x05\\x01\\x00")
assert s.recv(2) == b"\\x05\\x00"
s.sendall(b"\\x05\\x01\\x00\\x03" + bytes([len(host)]) + host + port.to_bytes(2, "big"))
reply = s.recv(10)
print("reply", reply[1])
if reply[1] == 0:
    s.sendall(b"GET /via-socks HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    print(data.split(b"\\r\\n\\r\\n", 1)[1].decode(), end="")
"""


def test_curl_reaches_an_allowed_name_through_the_http_proxy(
        gates: Gates, jailer: Jailer, upstream: Upstream, resolver: Resolver) -> None:
    jail = gates("allowed.test", allow_local_binding=True).jail()
    url = f"http://allowed.test:{upstream.port}"
    done = jailer.run(jail, f"curl -sS {url}/plain && curl -sS --proxytunnel {url}/tunnel")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "upstream saw /plain\nupstream saw /tunnel\n"
    plain = upstream.heads[0].split("\r\n")
    assert plain[0] == "GET /plain HTTP/1.1"  # origin form towards the upstream
    assert "Connection: close" in plain
    assert not any(h.lower().startswith("proxy-") for h in plain)
    assert resolver.asked == ["allowed.test", "allowed.test"]
    assert gates.violations == []


def test_curl_reaches_an_allowed_name_through_socks5h(
        gates: Gates, jailer: Jailer, upstream: Upstream, resolver: Resolver) -> None:
    jail = gates("allowed.test", allow_local_binding=True).jail()
    url = f"http://allowed.test:{upstream.port}"
    # ALL_PROXY alone (socks5h: the name goes to the proxy, the sandbox has no DNS)
    done = jailer.run(jail, f"env -u http_proxy -u HTTP_PROXY curl -sS {url}/socks")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "upstream saw /socks\n"
    assert resolver.asked == ["allowed.test"]


def test_python_reaches_an_allowed_name_through_connect_and_socks5(
        gates: Gates, jailer: Jailer, upstream: Upstream) -> None:
    gate = gates("allowed.test", allow_local_binding=True)
    port = str(upstream.port)
    tunnel = jailer.run(gate.jail(), "", argv=[*PY, CONNECT_CLIENT, "allowed.test", port])
    socks = jailer.run(gate.jail(), "", argv=[*PY, SOCKS_CLIENT, "allowed.test", port])
    assert tunnel.stdout == "upstream saw /via-connect\n", tunnel.stderr
    assert socks.stdout == "reply 0\nupstream saw /via-socks\n", socks.stderr


def test_a_large_body_crosses_the_bridge_intact(gates: Gates, jailer: Jailer,
                                                upstream: Upstream) -> None:
    jail = gates("allowed.test", allow_local_binding=True).jail()
    size = 6_000_000
    url = f"http://allowed.test:{upstream.port}/big/{size}"
    done = jailer.run(jail, f"curl -sS {url} | sha256sum; curl -sS -p {url} | sha256sum")
    digest = hashlib.sha256(pattern(size)).hexdigest()
    assert done.stdout.split() == [digest, "-", digest, "-"], done.stderr


def test_a_name_not_allowed_is_refused_reported_and_never_resolved(
        gates: Gates, jailer: Jailer, upstream: Upstream, resolver: Resolver) -> None:
    gate = gates("allowed.test", allow_local_binding=True)
    done = jailer.run(gate.jail(),
                      f"curl -sS http://secret-data.attacker.test:{upstream.port}/x")
    assert "wisp sandbox: the connection to secret-data.attacker.test was refused" in done.stdout
    assert "WebFetch(domain:secret-data.attacker.test)" in done.stdout
    tunnel = jailer.run(gate.jail(), f"curl -sS -p http://other.test:{upstream.port}/")
    assert "403" in tunnel.stderr and tunnel.returncode != 0
    socks = jailer.run(gate.jail(), "", argv=[*PY, SOCKS_CLIENT, "third.test", "80"])
    assert socks.stdout == "reply 2\n", socks.stderr  # 0x02: not allowed by ruleset
    assert gates.violations == ["secret-data.attacker.test", "other.test", "third.test"]
    assert resolver.asked == []
    assert upstream.heads == []


def test_denied_entries_win_over_allowed_ones(gates: Gates, jailer: Jailer,
                                               upstream: Upstream, resolver: Resolver) -> None:
    gate = gates("allowed.test", "*.allowed.test", denied_domains=("WWW.Allowed.Test.",),
                 allow_local_binding=True)
    done = jailer.run(gate.jail(), f"curl -sS http://www.allowed.test:{upstream.port}/")
    assert "the connection to www.allowed.test was refused" in done.stdout
    assert gates.violations == ["www.allowed.test"]
    assert resolver.asked == [] and upstream.heads == []


LOOPBACK_SPELLINGS = ("127.0.0.1", "127.1", "2130706433", "0x7f.1", "0177.0.0.1",
                      "0x7f000001", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::1]",
                      "localhost", "LOCALHOST.", "0.0.0.0", "0", "[::]", "169.254.169.254",
                      "10.0.0.1", "[fe80::1]")

RAW_CONNECT = """
import socket, sys
port = sys.argv[1]
for host in sys.argv[2:]:
    s = socket.create_connection(("127.0.0.1", 3128), timeout=20)
    s.sendall(f"CONNECT {host}:{port} HTTP/1.1\\r\\nHost: {host}:{port}\\r\\n\\r\\n".encode())
    print(host, s.recv(4096).split(b"\\r\\n", 1)[0].decode())
"""


def test_loopback_in_every_spelling_is_refused(gates: Gates, jailer: Jailer,
                                                upstream: Upstream) -> None:
    jail = gates("allowed.test", allow_local_binding=True).jail()
    done = jailer.run(jail, "", argv=[*PY, RAW_CONNECT, str(upstream.port),
                                      *LOOPBACK_SPELLINGS])
    lines = done.stdout.splitlines()
    assert lines == [f"{h} HTTP/1.1 403 Forbidden" for h in LOOPBACK_SPELLINGS], done.stderr
    assert upstream.heads == []
    assert len(gates.violations) == len(LOOPBACK_SPELLINGS)
    # reported as the lists read them
    assert gates.violations[:4] == ["127.0.0.1"] * 4 and "localhost" in gates.violations


def test_an_allowed_loopback_literal_needs_allow_local_binding(
        gates: Gates, jailer: Jailer, upstream: Upstream) -> None:
    spellings = ("127.0.0.1", "2130706433", "127.1", "[::ffff:127.0.0.1]")
    refused = jailer.run(gates("127.0.0.1").jail(), "",
                         argv=[*PY, RAW_CONNECT, str(upstream.port), *spellings])
    assert refused.stdout.splitlines() == [f"{h} HTTP/1.1 403 Forbidden" for h in spellings]
    opted_in = gates("127.0.0.1", allow_local_binding=True).jail()
    url = f"http://2130706433:{upstream.port}/literal"
    done = jailer.run(opted_in, f"curl -sS --noproxy '' -x http://127.0.0.1:3128 {url}")
    assert done.stdout == "upstream saw /literal\n", done.stderr


def test_a_name_resolving_to_a_local_address_is_refused(
        gates: Gates, jailer: Jailer, upstream: Upstream, resolver: Resolver) -> None:
    """DNS rebinding: the name is allowed, its answer points at the host's loopback."""
    url = f"http://rebind.test:{upstream.port}/"
    plain = jailer.run(gates("rebind.test").jail(), f"curl -sS {url}")
    assert "rebind.test was refused: resolves to a local or reserved address" in plain.stdout
    wildcard = gates("*.allowed.test", allow_local_binding=True).jail()
    url = f"http://www.allowed.test:{upstream.port}/"
    by_wildcard = jailer.run(wildcard, f"curl -sS {url}")
    assert "www.allowed.test was refused" in by_wildcard.stdout
    assert resolver.asked == ["rebind.test", "www.allowed.test"]
    assert gates.violations == ["rebind.test", "www.allowed.test"]
    assert upstream.heads == []


def test_the_users_http_proxy_receives_admitted_requests_only(
        gates: Gates, jailer: Jailer, upstream: Upstream, resolver: Resolver) -> None:
    """`httpProxyPort`: the user's proxy (here the upstream, which records what it gets)
    sees the request as the client sent it; refused names never reach it."""
    gate = gates("allowed.test", http_proxy_port=upstream.port)
    done = jailer.run(gate.jail(), "curl -sS http://allowed.test/via-user-proxy; "
                                   "curl -sS http://denied.test/")
    assert done.stdout.startswith("upstream saw http://allowed.test/via-user-proxy\n")
    assert "denied.test was refused" in done.stdout
    assert len(upstream.heads) == 1
    assert upstream.heads[0].startswith("GET http://allowed.test/via-user-proxy HTTP/1.1")
    assert resolver.asked == []  # the user's proxy resolves
    assert gates.violations == ["denied.test"]


def test_the_users_socks_proxy_receives_admitted_requests_only(
        gates: Gates, jailer: Jailer, resolver: Resolver) -> None:
    """`socksProxyPort`: the SOCKS5 request goes to the user's proxy unchanged (the name,
    not an address: it resolves), and its reply comes back to the client."""
    user = UserSocksProxy()
    try:
        gate = gates("allowed.test", socks_proxy_port=user.port)
        done = jailer.run(gate.jail(), "curl -sS -x socks5h://127.0.0.1:1080 "
                                       "http://allowed.test:8080/ && "
                                       "curl -sS -x socks5h://127.0.0.1:1080 http://no.test/")
        assert done.stdout == "user proxy reached allowed.test:8080\n"
        assert "(97)" in done.stderr  # curl's SOCKS failure: the ruleset refused no.test
        assert user.targets == [("allowed.test", 8080)]
        assert resolver.asked == [] and gates.violations == ["no.test"]
    finally:
        user.close()


def test_socks5_address_requests_are_judged_like_names(
        gates: Gates, jailer: Jailer, upstream: Upstream, resolver: Resolver) -> None:
    """curl's `socks5://` (not socks5h) sends IPv4 and IPv6 addresses, not names."""
    gate = gates("allowed.test", allow_local_binding=True)
    for target in ("127.0.0.1", "[::1]", "[::ffff:127.0.0.1]"):
        done = jailer.run(gate.jail(), f"curl -sS --noproxy '' -x socks5://127.0.0.1:1080 "
                                       f"http://{target}:{upstream.port}/")
        assert done.returncode == 97 and "(2)" in done.stderr, done.stderr  # ruleset: 0x02
    assert gates.violations == ["127.0.0.1", "::1", "127.0.0.1"]
    assert upstream.heads == [] and resolver.asked == []
