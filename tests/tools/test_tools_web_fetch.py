"""WebFetch tests. They only ever contact 127.0.0.1, which WebFetch refuses unless an allow
rule names it: these calls carry what a `WebFetch(domain:127.0.0.1)` rule gives the tool.
The refusals themselves are tested in test_web_fetch_guard.py."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.tools.conftest import Caller
from wisp.tools._html_text import html_to_text
from wisp.tools.base import ToolResult
from wisp.tools.web_fetch import WebFetch, normalise_url

LOCAL_ALLOWED = frozenset({"127.0.0.1"})  # as a WebFetch(domain:127.0.0.1) rule grants

PAGE = (
    b"<html><head><title>Test  Page</title><style>body{color:red}</style></head>"
    b"<body><script>alert('x')</script><h1>Heading</h1><p>First &amp; second.</p>"
    b"<ul><li>one</li><li>two</li></ul></body></html>"
)


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/away":
            self.send_response(302)
            self.send_header("Location", "https://elsewhere.invalid/target")
            self.end_headers()
            return
        if self.path == "/missing":
            self.send_error(404, "Not Found")
            return
        body, ctype = (PAGE, "text/html; charset=utf-8")
        if self.path == "/big":
            body, ctype = (b"z" * 50_000, "text/plain")
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def local_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def fetch_local(call: Caller, url: str, prompt: str) -> ToolResult:
    return call(WebFetch(), {"url": url, "prompt": prompt}, allowed_internal_hosts=LOCAL_ALLOWED)


def test_unreachable_host_is_a_clear_error(call: Caller) -> None:
    result = fetch_local(call, "http://127.0.0.1:9/", "anything")
    assert result.is_error
    assert str(result.content).startswith("WebFetch failed: could not reach 127.0.0.1: ")
    assert "Traceback" not in str(result.content)


def test_fetches_html_as_text_with_prompt(call: Caller, local_server: str) -> None:
    result = fetch_local(call, f"{local_server}/page", "What is the heading?")
    assert not result.is_error, result.content
    text = str(result.content)
    assert (
        text.splitlines()[0]
        == 'Answer this prompt using the page content below: "What is the heading?"'
    )
    assert "Heading" in text
    assert "First & second." in text
    assert "alert" not in text
    assert "color:red" not in text
    assert result.data["code"] == 200
    assert result.data["bytes"] == len(PAGE)
    assert result.data["url"] == f"{local_server}/page"


def test_long_pages_are_truncated(call: Caller, local_server: str) -> None:
    result = fetch_local(call, f"{local_server}/big", "p")
    assert "z" * 20_000 in str(result.content)
    assert "z" * 20_001 not in str(result.content)
    assert "truncated" in str(result.content)


def test_http_error_status(call: Caller, local_server: str) -> None:
    result = fetch_local(call, f"{local_server}/missing", "p")
    assert result.is_error
    assert "HTTP 404" in str(result.content)


def test_cross_host_redirect_is_reported_not_followed(call: Caller, local_server: str) -> None:
    result = fetch_local(call, f"{local_server}/away", "p")
    assert not result.is_error
    assert "https://elsewhere.invalid/target" in str(result.content)


def test_invalid_url(call: Caller) -> None:
    for url in ("ftp://example.com/x", "not a url", "/relative"):
        result = call(WebFetch(), {"url": url, "prompt": "p"})
        assert result.is_error
        assert "Invalid URL" in str(result.content)


def test_url_normalisation() -> None:
    assert normalise_url("http://example.com/a?b=1") == "https://example.com/a?b=1"
    assert normalise_url("http://localhost:8080/") == "http://localhost:8080/"
    assert normalise_url("http://127.0.0.1/x") == "http://127.0.0.1/x"
    assert normalise_url("https://Example.com") == "https://Example.com"


def test_domain() -> None:
    assert WebFetch.domain({"url": "https://Docs.Python.org/3/"}) == "docs.python.org"
    assert WebFetch().domain({"url": "http://127.0.0.1:9/"}) == "127.0.0.1"
    assert WebFetch.domain({"url": 3}) == ""
    assert WebFetch.domain({}) == ""


def test_html_to_text() -> None:
    text = html_to_text(PAGE.decode())
    assert text.startswith("# Test Page")
    assert "- one\n- two" in text


def test_metadata() -> None:
    tool = WebFetch()
    assert tool.kind == "network"
    assert tool.target_paths({"url": "https://x"}) == []
