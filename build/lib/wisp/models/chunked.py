"""HTTP/1.1 chunked transfer decoding over a byte buffer, without awaiting.

`wisp.models.http` feeds it whatever one socket read returned and gets back the payload
bytes it completed. One read usually holds several SSE events, each in its own chunk, so a
streamed answer costs one await per network read instead of three per chunk (size line,
data, CRLF): that was most of the client's time per turn.
"""

from __future__ import annotations

from wisp.errors import StreamCutError

# A chunk-size line (with extensions) or a trailer line longer than this is malformed.
MAX_FRAMING_LINE = 64 * 1024


class ChunkedDecoder:
    def __init__(self) -> None:
        self._buffer = bytearray()
        self._remaining = 0  # data bytes still owed by the current chunk
        self._state = "size"  # size → data → crlf → size …; 0-size → trailers → done
        self.done = False  # the last chunk arrived: the body is complete
        self.complete = False  # its trailers ended too: the connection can be reused

    def feed(self, data: bytes) -> bytes:
        """Adds bytes from the socket; returns the payload they completed (maybe b"")."""
        buffer = self._buffer
        buffer += data
        out = bytearray()
        pos = 0  # what is consumed is dropped once, at the end: no copying per chunk
        while self._state != "end":
            if self._state == "data":
                n = min(self._remaining, len(buffer) - pos)
                if n <= 0:
                    break
                out += buffer[pos:pos + n]
                pos += n
                self._remaining -= n
                if self._remaining:
                    break
                self._state = "crlf"
                continue
            newline = buffer.find(b"\n", pos)
            if newline < 0:
                if len(buffer) - pos > MAX_FRAMING_LINE:
                    raise StreamCutError("Malformed chunked encoding: overlong framing line")
                break
            line = bytes(buffer[pos:newline + 1])
            pos = newline + 1
            self._framing_line(line)
        del buffer[:pos]
        return bytes(out)

    def missing(self) -> str:
        """Why the body is incomplete, for an early end of the connection."""
        if self._state == "data":
            return f"{self._remaining} bytes of the body missing"
        return "connection closed inside chunked framing"

    def _framing_line(self, line: bytes) -> None:
        if self._state == "size":
            self._start_chunk(line)
        elif self._state == "crlf":
            self._state = "size"
        elif self._state == "trailers" and not line.strip():
            self._state = "end"
            self.complete = True

    def _start_chunk(self, line: bytes) -> None:
        size_text = line.partition(b";")[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise StreamCutError(f"Malformed chunked encoding: {line[:40]!r}") from None
        if size < 0:
            raise StreamCutError(f"Malformed chunked encoding: {line[:40]!r}")
        if size == 0:
            # Trailers are skipped; a peer that closes before their final CRLF has still
            # sent everything that matters, but the connection is not reusable then.
            self.done = True
            self._state = "trailers"
        else:
            self._remaining = size
            self._state = "data"
