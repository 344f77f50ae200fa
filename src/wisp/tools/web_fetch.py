"""WebFetch: download a page and hand its text to the model along with the user's question.

urllib is imported inside the fetch, not at module load, to keep `wisp` start-up fast.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

from wisp.tools.base import JSON, Tool, ToolContext, ToolKind, ToolResult, check_input

TIMEOUT_S = 15.0
MAX_BYTES = 2 * 1024 * 1024
MAX_CHARS = 20_000
USER_AGENT = "wisp/0.1 (+WebFetch)"
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
_TEXTUAL = ("text/", "json", "xml", "javascript", "yaml", "toml")


@dataclass
class _Page:
    url: str
    status: int
    reason: str
    content_type: str
    charset: str
    body: bytes


class _CrossHostRedirect(Exception):
    def __init__(self, target: str, status: int) -> None:
        super().__init__(target)
        self.target, self.status = target, status


def _same_site(a: str, b: str) -> bool:
    def bare(url: str) -> str:
        host = (urlsplit(url).hostname or "").lower()
        return host.removeprefix("www.")

    return bare(a) == bare(b)


def normalise_url(url: str) -> str:
    """Validated absolute URL, with http upgraded to https for anything but loopback."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"Invalid URL {url!r}: use an absolute http(s) URL")
    if parts.scheme == "http" and parts.hostname.lower() not in _LOCAL_HOSTS:
        parts = parts._replace(scheme="https")
    return urlunsplit(parts)


def _fetch(url: str) -> _Page:
    import urllib.request

    class _Redirects(urllib.request.HTTPRedirectHandler):
        # Another host needs its own permission decision, so report it rather than follow.
        def redirect_request(  # noqa: PLR0917 (signature fixed by urllib)
            self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
        ) -> Any:
            if not _same_site(req.full_url, newurl):
                raise _CrossHostRedirect(newurl, code)
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    handlers: list[Any] = [_Redirects()]
    if (urlsplit(url).hostname or "").lower() in _LOCAL_HOSTS:
        handlers.append(urllib.request.ProxyHandler({}))
    opener = urllib.request.build_opener(*handlers)
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept": "*/*"})
    with opener.open(request, timeout=TIMEOUT_S) as response:
        body = response.read(MAX_BYTES)
        return _Page(
            url=response.geturl(),
            status=response.status,
            reason=response.reason or "",
            content_type=response.headers.get_content_type(),
            charset=response.headers.get_content_charset() or "utf-8",
            body=body,
        )


def _failure(url: str, exc: BaseException) -> str:
    import urllib.error

    host = urlsplit(url).hostname or url
    if isinstance(exc, urllib.error.HTTPError):
        return f"WebFetch failed: {url} returned HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return f"WebFetch failed: could not reach {host}: {exc.reason}"
    if isinstance(exc, TimeoutError):
        return f"WebFetch failed: could not reach {host}: timed out after {TIMEOUT_S:g}s"
    if isinstance(exc, OSError):
        return f"WebFetch failed: could not reach {host}: {exc}"
    return f"WebFetch failed: {type(exc).__name__}: {exc}"


def _page_text(page: _Page) -> str | None:
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
        try:
            url = normalise_url(tool_input["url"])
        except ValueError as exc:
            return ToolResult.error(str(exc))
        started = time.monotonic()
        fetch = asyncio.ensure_future(asyncio.to_thread(_fetch, url))
        abort = asyncio.ensure_future(ctx.abort.wait())
        try:
            await asyncio.wait({fetch, abort}, return_when=asyncio.FIRST_COMPLETED)
            if not fetch.done() and ctx.abort.is_set():
                # The worker thread cannot be cancelled; it ends by itself within the timeout.
                fetch.add_done_callback(lambda f: f.exception())
                return ToolResult.error(f"WebFetch of {url} was interrupted.")
            await asyncio.wait({fetch})
        finally:
            abort.cancel()
            if abort.done() and not abort.cancelled():
                abort.exception()
        failure = fetch.exception()
        if isinstance(failure, _CrossHostRedirect):
            return _redirect_result(url, failure)
        if failure is not None:
            return ToolResult.error(_failure(url, failure))
        return _present(fetch.result(), tool_input["prompt"], started)


def _redirect_result(url: str, redirect: _CrossHostRedirect) -> ToolResult:
    text = (
        f"{url} redirects (HTTP {redirect.status}) to a different host: {redirect.target}\n"
        "To continue, call WebFetch again with that URL."
    )
    data = {"bytes": 0, "code": redirect.status, "codeText": "Redirect", "result": text}
    return ToolResult(content=text, data={**data, "url": url, "durationMs": 0})


def _present(page: _Page, prompt: str, started: float) -> ToolResult:
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
