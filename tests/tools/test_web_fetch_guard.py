"""WebFetch refuses internal addresses unless a `WebFetch(domain:HOST)` allow rule names the
host exactly. The judgement is on the resolved address, so every spelling of an internal
address is caught; each redirect hop is judged again; direct connections go to the address
that was judged (no second lookup for DNS rebinding to exploit)."""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.tools.conftest import Caller
from wisp.rules import Rule
from wisp.testing import reply
from wisp.tools import _address_guard as guard
from wisp.tools.web_fetch import WebFetch, allowed_internal_hosts

NOTHING: frozenset[str] = frozenset()

# Each class of internal address, with several members.
INTERNAL: dict[str, list[str]] = {
    "loopback": ["127.0.0.1", "127.0.0.53", "127.255.255.254", "::1"],
    "private": ["10.0.0.1", "10.255.255.254", "172.16.0.1", "172.31.255.254",
                "192.168.0.1", "192.168.255.254", "fc00::1", "fd12:3456::1", "fec0::1"],
    "link-local": ["169.254.0.1", "169.254.254.254", "fe80::1", "febf::1"],
    "shared (carrier-grade NAT)": ["100.64.0.1", "100.100.100.200", "100.127.255.254"],
    "unspecified": ["0.0.0.0", "::"],
    "multicast": ["224.0.0.1", "239.255.255.250", "ff02::1", "ff0e::1"],
    "reserved": ["240.0.0.1", "255.255.255.255", "4000::1"],
    "cloud metadata": ["169.254.169.254", "fd00:ec2::254"],
    "special-purpose": ["0.1.2.3", "192.0.2.1", "198.18.0.1", "203.0.113.5", "2001:db8::1"],
}
CASES = [(kind, addr) for kind, addrs in INTERNAL.items() for addr in addrs]
V4_CASES = [(kind, addr) for kind, addr in CASES if ":" not in addr]
PUBLIC = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "100.128.0.1", "172.32.0.1",
          "2606:4700:4700::1111", "2a00:1450:4001::1"]


def v4_spellings(dotted: str) -> dict[str, str]:
    """Ways to write one IPv4 address in a URL host that the resolver reads as that address."""
    a, b, c, d = (int(x) for x in dotted.split("."))
    n = int(ipaddress.IPv4Address(dotted))
    return {
        "dotted": dotted,
        "decimal": str(n),
        "hex": f"0x{n:08x}",
        "dotted-hex": ".".join(f"0x{x:x}" for x in (a, b, c, d)),
        "dotted-octal": ".".join(f"0{x:o}" for x in (a, b, c, d)),
        "three-part": f"{a}.{b}.{c * 256 + d}",
        "two-part": f"{a}.{(b << 16) | (c << 8) | d}",
        "mapped": f"[::ffff:{dotted}]",
        "mapped-hex": f"[::ffff:{(a << 8) | b:x}:{(c << 8) | d:x}]",
        "mapped-upper": f"[::FFFF:{dotted}]",
        "nat64": f"[64:ff9b::{dotted}]",
        "6to4": f"[2002:{(a << 8) | b:x}:{(c << 8) | d:x}::1]",
    }


def v6_spellings(text: str) -> dict[str, str]:
    ip = ipaddress.IPv6Address(text)
    return {"compressed": f"[{ip.compressed}]", "exploded": f"[{ip.exploded}]",
            "upper": f"[{ip.exploded.upper()}]"}


def spellings(addr: str) -> dict[str, str]:
    return v6_spellings(addr) if ":" in addr else v4_spellings(addr)


SPELLED = [(kind, addr, how, host) for kind, addr in CASES
           for how, host in spellings(addr).items()]


def refusal(url: str, allowed: frozenset[str] = NOTHING) -> str:
    with pytest.raises(guard.AddressRefused) as caught:
        guard.checked_addresses(url, allowed)
    return str(caught.value)


# The classifier --------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "addr"), CASES)
def test_every_internal_class_is_named(kind: str, addr: str) -> None:
    assert guard.address_class(ipaddress.ip_address(addr)) == kind


@pytest.mark.parametrize(("kind", "addr"), V4_CASES)
@pytest.mark.parametrize("wrap", ["::ffff:{}", "64:ff9b::{}", "::{}", "2002:{hi}:{lo}::"])
def test_ipv6_forms_carrying_an_internal_ipv4_are_judged_by_it(kind: str, addr: str,
                                                              wrap: str) -> None:
    n = int(ipaddress.IPv4Address(addr))
    ip = ipaddress.IPv6Address(wrap.format(addr, hi=f"{n >> 16:x}", lo=f"{n & 0xFFFF:x}"))
    expected = kind
    if wrap == "::{}" and int(ip) <= 1:
        expected = guard.address_class(ip) or ""  # ::0.0.0.0 is plain "::"
    assert guard.address_class(ip) == expected


@pytest.mark.parametrize("addr", [*PUBLIC, "::ffff:8.8.8.8", "2002:808:808::1",
                                  "64:ff9b::808:808"])
def test_public_addresses_pass(addr: str) -> None:
    assert guard.address_class(ipaddress.ip_address(addr)) is None


# Judging URLs, resolved through the real resolver (numeric hosts need no network) --------


@pytest.mark.parametrize(("kind", "addr", "how", "host"), SPELLED)
def test_every_spelling_of_an_internal_address_is_refused(kind: str, addr: str, how: str,
                                                          host: str) -> None:
    message = refusal(f"http://{host}:8080/x")
    assert message.startswith(f"WebFetch refused http://{host}:8080/x: ")
    assert f" {kind} address" in message, (how, message)


@pytest.mark.parametrize("addr", PUBLIC)
def test_every_spelling_of_a_public_address_passes(addr: str) -> None:
    for host in spellings(addr).values():
        infos = guard.checked_addresses(f"https://{host}/", NOTHING)
        assert {guard.address_class(guard._sockaddr_ip(i)) for i in infos} == {None}


def test_the_refusal_names_url_host_class_and_the_rule_that_allows_it() -> None:
    assert refusal("http://127.0.0.1:8080/") == (
        "WebFetch refused http://127.0.0.1:8080/: 127.0.0.1 is a loopback address. "
        "Allow it with a WebFetch(domain:127.0.0.1) rule.")
    assert refusal("http://2130706433/") == (
        "WebFetch refused http://2130706433/: 2130706433 resolves to 127.0.0.1, a loopback "
        "address. Allow it with a WebFetch(domain:2130706433) rule.")
    assert refusal("http://[::ffff:127.0.0.1]/").startswith(
        "WebFetch refused http://[::ffff:127.0.0.1]/: ::ffff:127.0.0.1 is a loopback address "
        "(it carries the IPv4 address 127.0.0.1).")
    assert "169.254.169.254 is a cloud metadata address" in refusal("http://169.254.169.254/")


@pytest.mark.parametrize("url", ["http://0x7f.1/", "http://127.1/", "http://[::1]/",
                                 "http://0/", "http://[0:0:0:0:0:0:0:1]/"])
def test_odd_spellings_from_the_brief(url: str) -> None:
    message = refusal(url)
    assert "loopback address" in message or "unspecified address" in message


@pytest.mark.parametrize("host", ["[fe80::1%25eth0]", "[fe80::1%eth0]", "[fe80::1%251]"])
def test_link_local_literals_with_a_zone_are_refused_without_a_lookup(host: str) -> None:
    assert "is a link-local address" in refusal(f"http://{host}/")


@pytest.mark.parametrize(("host", "kind"), [
    ("localhost", "loopback"), ("LOCALHOST", "loopback"), ("localhost.", "loopback"),
    ("api.localhost", "loopback"), ("metadata.google.internal", "cloud metadata"),
    ("Metadata.Google.Internal.", "cloud metadata"),
])
def test_internal_names_are_refused_even_where_dns_does_not_answer(host: str, kind: str) -> None:
    assert f"is a {kind} host" in refusal(f"http://{host}/")


# Resolution and the allow rule, with a stand-in resolver ---------------------------------


@dataclass
class FakeDNS:
    """Answers for chosen names (a list per name: one per lookup, the last repeating);
    other names go to the real resolver."""

    answers: dict[str, list[list[str]]] = field(default_factory=dict)
    lookups: list[str] = field(default_factory=list)

    def __call__(self, host: str, port: int) -> list[Any]:
        if host not in self.answers:
            return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        self.lookups.append(host)
        queue = self.answers[host]
        ips = queue.pop(0) if len(queue) > 1 else queue[0]
        if not ips:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_STREAM, 6, "",
                 (ip, port)) for ip in ips]


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> FakeDNS:
    fake = FakeDNS()
    monkeypatch.setattr(guard, "resolve", fake)
    return fake


def test_one_internal_answer_among_public_ones_refuses_the_name(dns: FakeDNS) -> None:
    dns.answers["mixed.test"] = [["93.184.216.34", "10.1.2.3"]]
    assert "mixed.test resolves to 10.1.2.3, a private address" in refusal("https://mixed.test/")


def test_the_rule_must_name_the_host_exactly(dns: FakeDNS) -> None:
    dns.answers.update({"site.test": [["127.0.0.1"]], "www.site.test": [["127.0.0.1"]]})
    allowed = frozenset({"site.test"})
    assert guard.checked_addresses("http://site.test/", allowed)
    assert "Allow it with a WebFetch(domain:www.site.test) rule" in refusal(
        "http://www.site.test/", allowed)
    # The rule names a spelling, not an address: another spelling needs its own rule.
    assert guard.checked_addresses("http://127.0.0.1/", frozenset({"127.0.0.1"}))
    assert "127.1 resolves to 127.0.0.1" in refusal("http://127.1/", frozenset({"127.0.0.1"}))
    assert "localhost. is a loopback host" in refusal("http://localhost./",
                                                      frozenset({"localhost"}))


def test_allowed_internal_hosts_come_from_webfetch_domain_allow_rules() -> None:
    rules = [Rule.parse(text) for text in (
        "WebFetch(domain:127.0.0.1)", "WebFetch(domain:[::1])", "WebFetch(domain:Intra.NET)",
        "WebFetch", "Bash(domain:10.0.0.1)", "WebFetch(https://x)")]
    assert allowed_internal_hosts(rules) == {"127.0.0.1", "::1", "intra.net"}


# The tool, in process, against a local server --------------------------------------------


@dataclass
class Seen:
    paths: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)


Route = Callable[[BaseHTTPRequestHandler], None]


def serve(routes: dict[str, Route]) -> tuple[ThreadingHTTPServer, Seen]:
    seen = Seen()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.paths.append(self.path)
            seen.hosts.append(self.headers.get("Host", ""))
            routes.get(self.path, page)(self)

        def do_CONNECT(self) -> None:
            seen.paths.append(f"CONNECT {self.path}")
            self.send_error(403, "Forbidden")

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server, seen


def page(handler: BaseHTTPRequestHandler) -> None:
    body = b"<html><body><h1>Internal page</h1></body></html>"
    handler.send_response(200)
    handler.send_header("Content-Type", "text/html")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def redirect(location: str) -> Route:
    def send(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(302)
        handler.send_header("Location", location.replace("PORT", str(handler.server.server_port)))
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    return send


@pytest.fixture
def local() -> Iterator[tuple[int, Seen, dict[str, Route]]]:
    routes: dict[str, Route] = {}
    server, seen = serve(routes)
    try:
        yield server.server_address[1], seen, routes
    finally:
        server.shutdown()
        server.server_close()


def fetch(call: Caller, url: str, allowed: frozenset[str] = NOTHING, **ctx: Any) -> Any:
    return call(WebFetch(), {"url": url, "prompt": "p"}, allowed_internal_hosts=allowed, **ctx)


def test_a_local_page_is_refused_without_a_rule_and_never_requested(call: Caller, local):
    port, seen, _ = local
    result = fetch(call, f"http://127.0.0.1:{port}/page")
    assert result.is_error
    assert result.content == (
        f"WebFetch refused http://127.0.0.1:{port}/page: 127.0.0.1 is a loopback address. "
        "Allow it with a WebFetch(domain:127.0.0.1) rule.")
    assert seen.paths == []
    assert "Internal page" in str(fetch(call, f"http://127.0.0.1:{port}/page",
                                        frozenset({"127.0.0.1"})).content)


def test_a_same_site_redirect_into_an_unnamed_internal_host_is_refused_at_that_hop(
        call: Caller, local, dns: FakeDNS) -> None:
    port, seen, routes = local
    dns.answers.update({"site.test": [["127.0.0.1"]], "www.site.test": [["127.0.0.1"]]})
    routes["/hop"] = redirect("http://www.site.test:PORT/secret")
    result = fetch(call, f"http://site.test:{port}/hop", frozenset({"site.test"}))
    assert result.is_error
    assert str(result.content).startswith(
        f"WebFetch refused http://www.site.test:{port}/secret: www.site.test resolves to "
        "127.0.0.1, a loopback address.")
    assert seen.paths == ["/hop"]


def test_a_redirect_to_another_internal_host_is_refused_not_reported(call: Caller, local):
    port, seen, routes = local
    routes["/out"] = redirect("http://localhost:PORT/secret")
    result = fetch(call, f"http://127.0.0.1:{port}/out", frozenset({"127.0.0.1"}))
    assert result.is_error
    assert "localhost is a loopback host" in str(result.content)
    assert seen.paths == ["/out"]


def test_the_connection_goes_to_the_address_that_was_judged(call: Caller, local,
                                                            dns: FakeDNS) -> None:
    """DNS rebinding: the first answer is judged, later ones would point elsewhere. The name
    is looked up once, the judged address dialled, and the name kept for the Host header."""
    port, seen, _ = local
    dns.answers["rebind.test"] = [["127.0.0.1"], ["10.9.9.9"]]
    result = fetch(call, f"http://rebind.test:{port}/page", frozenset({"rebind.test"}))
    assert not result.is_error, result.content
    assert dns.lookups == ["rebind.test"]
    assert seen.hosts == [f"rebind.test:{port}"]


def test_a_public_name_that_rebinds_inside_is_judged_by_its_answer(call: Caller, local,
                                                                   dns: FakeDNS) -> None:
    port, seen, _ = local
    dns.answers["rebind.test"] = [["127.0.0.1"], ["93.184.216.34"]]
    result = fetch(call, f"http://rebind.test:{port}/page")
    assert "rebind.test resolves to 127.0.0.1, a loopback address" in str(result.content)
    assert seen.paths == []


def test_through_a_proxy_the_local_answer_is_still_judged(call: Caller, local,
                                                          dns: FakeDNS) -> None:
    port, seen, _ = local
    env = {"HTTPS_PROXY": f"http://127.0.0.1:{port}", "HTTP_PROXY": f"http://127.0.0.1:{port}"}
    dns.answers.update({"inside.test": [["10.1.2.3"]], "proxy-only.test": [[]]})
    refused = fetch(call, "https://inside.test/", env=env)
    assert "inside.test resolves to 10.1.2.3, a private address" in str(refused.content)
    assert seen.paths == []
    # A name only the proxy can resolve goes to the proxy (here, one that says no).
    sent = fetch(call, "https://proxy-only.test/", env=env)
    assert sent.is_error and "WebFetch refused" not in str(sent.content)
    assert seen.paths == ["CONNECT proxy-only.test:443"]


def test_unresolvable_hosts_are_a_plain_failure(call: Caller, dns: FakeDNS) -> None:
    dns.answers["nowhere.test"] = [[]]
    result = fetch(call, "https://nowhere.test/")
    assert result.content == ("WebFetch failed: could not reach nowhere.test: "
                              "Name or service not known")


# End to end: `wisp -p`, the scripted model asking for a page on 127.0.0.1 ------------------


def webfetch_run(wisp, server, url: str, *flags: str, env: dict[str, str] | None = None):
    server.script(reply.tool_use("WebFetch", {"url": url, "prompt": "What is on it?"}),
                  reply.text("done"))
    run = wisp("-p", "fetch it", "--output-format", "stream-json", "--verbose", *flags,
               env=env)
    assert run.returncode == 0, run.stderr
    return run.of_type("user")[0]["message"]["content"][0]


@pytest.mark.parametrize("flags", [("--allowedTools", "WebFetch"),
                                   ("--permission-mode", "bypassPermissions")])
def test_wisp_p_refuses_a_local_page_that_only_the_permission_mode_allows(wisp, server, local,
                                                                          flags):
    port, seen, _ = local
    url = f"http://127.0.0.1:{port}/page"
    result = webfetch_run(wisp, server, url, *flags, env={"IS_SANDBOX": "1"})
    assert result["is_error"] is True
    assert result["content"] == (
        f"WebFetch refused {url}: 127.0.0.1 is a loopback address. "
        "Allow it with a WebFetch(domain:127.0.0.1) rule.")
    assert seen.paths == []  # the page was never requested


def test_wisp_p_fetches_a_local_page_a_domain_rule_names(wisp, server, local):
    port, seen, _ = local
    result = webfetch_run(wisp, server, f"http://127.0.0.1:{port}/page",
                          "--allowedTools", "WebFetch(domain:127.0.0.1)")
    assert result["is_error"] is False, result
    assert "Internal page" in str(result["content"])
    assert seen.paths == ["/page"]
