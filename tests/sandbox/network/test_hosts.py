"""The host rules: names against the lists, IP literals in every spelling against the
local-address rule. Spellings are generated, and each is checked against the C library's
own reading of it (getaddrinfo with AI_NUMERICHOST: no DNS), so the proxy reads a literal
exactly as the client that sent it does."""

from __future__ import annotations

import ipaddress
import random
import socket

import pytest

from wisp.sandbox.hosts import HostRules, address_class, canonical_host

IPv4 = ipaddress.IPv4Address


def rules(*allowed: str, denied: tuple[str, ...] = (), local: bool = False) -> HostRules:
    return HostRules(allowed, denied, allow_local=local)


@pytest.mark.parametrize(("host", "admitted"), [
    ("example.com", True), ("EXAMPLE.com.", True), ("www.example.com", False),
    ("api.github.com", True), ("a.b.github.com", True), ("github.com", False),
    ("evilgithub.com", False), ("github.com.evil.test", False), ("", False),
    ("exa mple.com", False), ("example.com:443", False),
])
def test_names_exact_and_wildcard(host: str, admitted: bool) -> None:
    found = rules("Example.COM.", "*.github.com").admit(host)
    assert (found is not None) is admitted


def test_denied_first_and_exactness() -> None:
    table = rules("*.example.com", "api.example.com", denied=("*.internal.example.com",))
    assert table.admit("db.internal.example.com") is None
    by_both = table.admit("api.example.com")
    by_wildcard = table.admit("www.example.com")
    assert by_both is not None and by_both.exact
    assert by_wildcard is not None and not by_wildcard.exact
    assert rules().admit("example.com") is None and not rules().allows_any
    assert not rules("*", "*.", "a b").allows_any  # entries naming no host are ignored


def _spellings(address: IPv4) -> list[str]:
    """Ways a client may write an IPv4 address that the C library accepts."""
    value = int(address)
    a, b, c, d = address.packed
    return [str(address), str(value), hex(value), "0" + oct(value)[2:],
            f"{a}.{value & 0xFFFFFF}", f"{a}.{b}.{value & 0xFFFF}",
            ".".join(hex(x) for x in (a, b, c, d)), ".".join(f"0{x:o}" for x in (a, b, c, d)),
            f"{hex(a)}.{b}.0{c:o}.{d}", f"[::ffff:{address}]",
            f"[::ffff:{(value >> 16):x}:{(value & 0xFFFF):x}]", f"{address}."]


def _c_library(spelling: str) -> IPv4 | None:
    host = spelling.strip("[]").removesuffix(".")
    try:
        found = socket.getaddrinfo(host, None, flags=socket.AI_NUMERICHOST)
    except socket.gaierror:
        return None
    parsed = ipaddress.ip_address(found[0][4][0])
    if isinstance(parsed, ipaddress.IPv6Address):
        return parsed.ipv4_mapped
    return parsed


RANGES = {"local": ("127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
                    "100.64.0.0/10"),
          "forbidden": ("169.254.0.0/16", "0.0.0.0/8", "224.0.0.0/4", "240.0.0.0/5"),
          "public": ("8.0.0.0/7", "1.0.0.0/8", "151.101.0.0/16")}


@pytest.mark.parametrize("kind", sorted(RANGES))
def test_generated_spellings_read_as_the_c_library_reads_them(kind: str) -> None:
    chooser = random.Random(f"spellings-{kind}")
    for _ in range(60):
        network = ipaddress.ip_network(chooser.choice(RANGES[kind]))
        address = IPv4(int(network.network_address) + chooser.randrange(network.num_addresses))
        for spelling in _spellings(address):
            canonical = canonical_host(spelling)
            assert canonical == str(address), spelling
            assert _c_library(spelling) == address, spelling
            assert address_class(IPv4(canonical)) == kind, spelling
            assert rules("allowed.test", local=True).admit(spelling) is None


@pytest.mark.parametrize(("literal", "kind"), [
    ("[::1]", "local"), ("[::]", "forbidden"), ("[fe80::1]", "forbidden"),
    ("[fc00::1]", "local"), ("[fd12:3456::1]", "local"), ("[ff02::1]", "forbidden"),
    ("[2002:7f00:1::]", "local"),  # 6to4 of 127.0.0.1
    ("[64:ff9b::a9fe:a9fe]", "forbidden"),  # NAT64 of 169.254.169.254
    ("[::7f00:1]", "local"),  # IPv4-compatible 127.0.0.1
    ("[2606:4700::1111]", "public"), ("[::ffff:1.1.1.1]", "public"),
    ("255.255.255.255", "forbidden"),
])
def test_ipv6_and_special_addresses(literal: str, kind: str) -> None:
    canonical = canonical_host(literal)
    assert canonical is not None
    assert address_class(ipaddress.ip_address(canonical)) == kind


def test_local_addresses_need_the_opt_in_and_an_exact_entry() -> None:
    loopback = IPv4("127.0.0.1")
    for table, expected in ((rules("127.0.0.1"), False), (rules("127.0.0.1", local=True), True),
                            (rules("dev.test", local=True), True),
                            (rules("*.test", local=True), False)):
        host = "127.0.0.1" if "127.0.0.1" in str(vars(table)) else "dev.test"
        admission = table.admit(host)
        assert admission is not None
        assert table.address_ok(admission, loopback) is expected, (vars(table), host)
    metadata = rules("169.254.169.254", local=True)
    admission = metadata.admit("169.254.169.254")
    assert admission is not None
    assert not metadata.address_ok(admission, IPv4("169.254.169.254"))  # never
    public = rules("*.example.com").admit("www.example.com")
    assert public is not None and rules("*.example.com").address_ok(public, IPv4("93.184.1.1"))


def test_an_allowed_literal_matches_every_spelling_of_it() -> None:
    table = rules("127.0.0.1", local=True)
    for spelling in _spellings(IPv4("127.0.0.1")):
        assert table.admit(spelling) is not None, spelling


def test_any_public_host_admits_every_name_but_never_a_local_address() -> None:
    """A served environment's unrestricted networking: names pass, deny entries still
    win, and what they resolve to must be public (no exact entry vouches for local)."""
    every = HostRules((), ("evil.test",), allow_local=True, any_public=True)
    assert every.allows_any
    admitted = every.admit("pypi.org")
    assert admitted is not None and not admitted.exact
    assert every.address_ok(admitted, ipaddress.ip_address("151.101.0.223"))
    for local in ("127.0.0.1", "10.0.0.5", "169.254.169.254", "::1"):
        assert not every.address_ok(admitted, ipaddress.ip_address(local))
    literal = every.admit("127.0.0.1")
    assert literal is not None and not every.address_ok(literal, ipaddress.ip_address(
        "127.0.0.1"))
    assert every.admit("evil.test") is None
    assert not rules().allows_any
