"""Parsing a request's head (request line, headers, query) and the framing of its body
(content-length, chunk sizes)."""

from __future__ import annotations

from urllib.parse import parse_qs, unquote

from wisp.serve.http.messages import HttpError, Request, bad_request
from wisp.serve.http.router import path_segments


def _parse_headers(lines: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in lines:
        if not line:
            continue
        name, sep, value = line.partition(":")
        # No folded lines, no space before the colon (RFC 9112 §5.1: reject, not guess).
        if not sep or not name or name[0] in " \t" or name[-1] in " \t":
            raise bad_request("malformed header line")
        name = name.lower()
        value = value.strip(" \t")
        prev = headers.get(name)
        headers[name] = value if prev is None else f"{prev}, {value}"
    return headers


def parse_head(head: bytes, max_query_fields: int = 1000) -> Request:
    """A Request (without body, client, id) from the bytes up to the blank line."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        raise bad_request("malformed request line")
    method, target, version = parts
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        raise HttpError(505, "invalid_request_error", f"unsupported protocol {version!r}")
    if not target.startswith("/"):
        raise bad_request("the request target must be a path")
    headers = _parse_headers(lines[1:])
    raw_path, _, qs = target.partition("?")
    try:
        query = parse_qs(qs, keep_blank_values=True, max_num_fields=max_query_fields) if qs else {}
    except ValueError as exc:
        raise bad_request(f"bad query string: {exc}") from None
    conn = headers.get("connection", "").lower()
    keep = "close" not in conn if version == "HTTP/1.1" else "keep-alive" in conn
    return Request(
        method,
        unquote(raw_path) if "%" in raw_path else raw_path,
        query,
        headers,
        segments=path_segments(raw_path),
        keep_alive=keep,
    )


def parse_content_length(value: str) -> int:
    if not (value.isascii() and value.isdigit()):
        raise bad_request("bad content-length")
    return int(value)


def parse_chunk_size(line: bytes) -> int:
    text = line[:-2].split(b";", 1)[0].strip()
    if not text or len(text) > 16 or text.strip(b"0123456789abcdefABCDEF"):
        raise bad_request("bad chunk size")
    return int(text, 16)
