"""WebFetch: download a page and hand its text to the model along with the user's question.

Internal addresses (loopback, private, link-local, cloud metadata…) are refused unless a
`WebFetch(domain:HOST)` allow rule names the host exactly: see `_address_guard`. The HTTP
modules are imported inside the fetch, not at module load, to keep `wisp` start-up fast.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal
from urllib.parse import urlsplit, urlunsplit

from wisp.tools.base import JSON, Tool, ToolContext, ToolKind, ToolResult, check_input

if TYPE_CHECKING:
    from wisp.rules import Rule
    from wisp.tools._deadline import Deadline
    from wisp.tools._web_http import CrossHostRedirect, Page

TIMEOUT_S = 15.0  # each connect and each read
# The whole fetch, redirects included (WISP_WEBFETCH_DEADLINE_S changes it): a server that
# sends a byte every few seconds passes every read's timeout and would never end.
DEADLINE_S = 60.0
MAX_BYTES = 10 * 1024 * 1024  # a larger body is an error, as in Claude Code
MAX_CHARS = 20_000
USER_AGENT = "wisp/0.1 (+WebFetch)"
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
_TEXTUAL = ("text/", "json", "xml", "javascript", "yaml", "toml")


def allowed_internal_hosts(allow_rules: Iterable[Rule]) -> frozenset[str]:
    """The hosts `WebFetch(domain:HOST)` allow rules name: the only internal hosts WebFetch
    may contact. Exact names only, never their subdomains: `domain:corp.example` must not
    open `db.corp.example`, which may well resolve inside."""
    hosts = set()
    for rule in allow_rules:
        content = rule.content or ""
        if rule.tool == "WebFetch" and content.startswith("domain:"):
            host = content.removeprefix("domain:").strip().lower()
            hosts.add(host.removeprefix("[").removesuffix("]"))  # [::1] or ::1
    return frozenset(hosts)


def normalise_url(url: str, plain_http_hosts: frozenset[str] = frozenset()) -> str:
    """Validated absolute URL, with http upgraded to https except for loopback names and
    `plain_http_hosts` (internal hosts a rule allows: they seldom speak TLS)."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"Invalid URL {url!r}: use an absolute http(s) URL")
    try:
        parts.port  # noqa: B018 (raises on a port out of range)
    except ValueError as exc:
        raise ValueError(f"Invalid URL {url!r}: {exc}") from None
    keep = _LOCAL_HOSTS | plain_http_hosts
    if parts.scheme == "http" and parts.hostname.lower() not in keep:
        parts = parts._replace(scheme="https")
    return urlunsplit(parts)


def deadline_s(env: Mapping[str, str]) -> float:
    try:
        seconds = float(env.get("WISP_WEBFETCH_DEADLINE_S", ""))
    except ValueError:
        return DEADLINE_S
    return seconds if 0 < seconds < float("inf") else DEADLINE_S


def _fetch(url: str, allowed: frozenset[str], env: dict[str, str] | None,
           deadline: Deadline) -> Page:
    from wisp.tools._web_http import fetch

    headers = {"User-Agent": USER_AGENT, "Accept": "*/*"}
    try:
        return fetch(url, allowed, timeout=TIMEOUT_S, headers=headers, max_bytes=MAX_BYTES,
                     env=env, deadline=deadline)
    finally:
        deadline.close()


def _failure(url: str, exc: BaseException) -> str:
    import http.client

    from wisp.tools._address_guard import AddressRefused
    from wisp.tools._web_http import FetchFailed, HTTPStatusError

    host = urlsplit(url).hostname or url
    if isinstance(exc, (AddressRefused, FetchFailed)):
        return str(exc)
    if isinstance(exc, HTTPStatusError):
        return f"WebFetch failed: {url} returned HTTP {exc.code} {exc.reason}"
    if isinstance(exc, TimeoutError):
        return f"WebFetch failed: could not reach {host}: timed out after {TIMEOUT_S:g}s"
    if isinstance(exc, OSError):
        return f"WebFetch failed: could not reach {host}: {exc.strerror or exc}"
    if isinstance(exc, http.client.HTTPException):
        return f"WebFetch failed: {host} sent a malformed response ({type(exc).__name__})"
    return f"WebFetch failed: {type(exc).__name__}: {exc}"


def _page_text(page: Page) -> str | None:
    """The readable text of the body, or None if it is not text."""
    try:
        decoded = page.body.decode(page.charset, errors="replace")
    except LookupError:
        decoded = page.body.decode("utf-8", errors="replace")
    ctype = page.content_type
    sniffed_html = ctype in ("", "application/octet-stream") and decoded.lstrip()[:1] == "<"
    if "html" in ctype or sniffed_html:
        from wisp.tools._html_text import html_to_text

        return html_to_text(decoded)
    if any(marker in ctype for marker in _TEXTUAL) or "\x00" not in decoded[:8192]:
        return decoded
    return None


class WebFetch(Tool):
    name: ClassVar[str] = "WebFetch"
    description: ClassVar[str] = (
        "Fetch a URL and return its readable text (HTML is reduced to plain text), along with "
        "the `prompt` saying what to look for in it. http is upgraded to https. Redirects to "
        "another host are reported instead of followed; fetch the new URL to continue. "
        "Internal addresses (localhost, private networks, cloud metadata) are refused unless "
        "a WebFetch(domain:HOST) rule allows that host. "
        f"Pages are cut at about {MAX_CHARS} characters. Read-only."
    )
    input_schema: ClassVar[JSON] = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "format": "uri", "description": "The URL to fetch"},
            "prompt": {"type": "string", "description": "What to find out from the page"},
        },
        "required": ["url", "prompt"],
    }
    kind: ClassVar[ToolKind] = "network"
    rule_subject: ClassVar[Literal["paths", "command", "domain"]] = "domain"

    def subject(self, tool_input: JSON) -> str:
        return self.domain(tool_input)

    @staticmethod
    def domain(tool_input: JSON) -> str:
        """The lower-cased host the call would contact ('' when the URL is unusable)."""
        url = tool_input.get("url")
        if not isinstance(url, str):
            return ""
        try:
            return (urlsplit(url.strip()).hostname or "").lower()
        except ValueError:
            return ""

    def describe(self, tool_input: JSON) -> str:
        return f"Fetch {tool_input.get('url', '')}"

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        problem = check_input(self.input_schema, tool_input)
        if problem:
            return ToolResult.error(problem)
        allowed = ctx.allowed_internal_hosts
        try:
            url = normalise_url(tool_input["url"], allowed)
        except ValueError as exc:
            return ToolResult.error(str(exc))
        started = time.monotonic()
        from wisp.tools._deadline import Deadline

        deadline = Deadline(deadline_s(os.environ if ctx.env is None else ctx.env))
        # Off the event loop: name resolution and the HTTP exchange both block.
        fetch = asyncio.ensure_future(asyncio.to_thread(_fetch, url, allowed, ctx.env,
                                                        deadline))
        if not await _finished_unless_aborted(fetch, ctx.abort):
            deadline.cancel()  # the worker thread's socket is shut: it ends at once
            return ToolResult.error(f"WebFetch of {url} was interrupted.")
        failure = fetch.exception()
        if failure is not None:
            return _failed(url, failure)
        return _present(fetch.result(), tool_input["prompt"], started)


async def _finished_unless_aborted(fetch: asyncio.Future[Page], abort_event: asyncio.Event
                                   ) -> bool:
    """Waits for `fetch`; False when the call was aborted first."""
    abort = asyncio.ensure_future(abort_event.wait())
    either: set[asyncio.Future[Any]] = {fetch, abort}
    try:
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not fetch.done() and abort_event.is_set():
            # The worker thread cannot be cancelled: the caller ends its fetch instead.
            fetch.add_done_callback(lambda f: f.exception())
            return False
        await asyncio.wait({fetch})
        return True
    finally:
        abort.cancel()
        if abort.done() and not abort.cancelled():
            abort.exception()


def _failed(url: str, failure: BaseException) -> ToolResult:
    from wisp.tools._web_http import CrossHostRedirect

    if isinstance(failure, CrossHostRedirect):
        return _redirect_result(url, failure)
    return ToolResult.error(_failure(url, failure))


def _redirect_result(url: str, redirect: CrossHostRedirect) -> ToolResult:
    text = (
        f"{url} redirects (HTTP {redirect.status}) to a different host: {redirect.target}\n"
        "To continue, call WebFetch again with that URL."
    )
    data = {"bytes": 0, "code": redirect.status, "codeText": "Redirect", "result": text}
    return ToolResult(content=text, data={**data, "url": url, "durationMs": 0})


def _present(page: Page, prompt: str, started: float) -> ToolResult:
    text = _page_text(page)
    if text is None:
        return ToolResult.error(
            f"WebFetch got {page.content_type} content from {page.url}, which is not text."
        )
    note = ""
    if len(text) > MAX_CHARS:
        note = f"\n\n[Page truncated: showing {MAX_CHARS} of {len(text)} characters.]"
        text = text[:MAX_CHARS]
    result = (
        f'Answer this prompt using the page content below: "{prompt}"\n'
        f"Source: {page.url} (HTTP {page.status})\n\n{text}{note}"
    )
    data = {
        "bytes": len(page.body),
        "code": page.status,
        "codeText": page.reason,
        "result": result,
        "durationMs": int((time.monotonic() - started) * 1000),
        "url": page.url,
    }
    return ToolResult(content=result, data=data)
