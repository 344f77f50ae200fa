"""The Messages API server of bench/tui.py, run as its own process (its request handling
stays off the GIL of the runner, whose reader thread stamps the UI's output).

Prints its URL on one line, then serves until stdin closes. Replies are chosen from the
prompt, so both CLIs (which make different side requests) get the same answers:

- a prompt holding `[[tui:stream:<hex>]]` (`stream_prompt`): a long Markdown answer
  streamed slowly (`reply.slow`, STREAM_CHUNKS text deltas STREAM_DELAY s apart), whose
  first line ends with the character U+<hex> and whose last with U+<hex>+1. When its
  stream starts, the server prints `stream <time.monotonic()> <seconds it lasts>`;
- a prompt holding `Q<digits>`: `ANS<digits>END` and a character unique to that number
  (`turn_mark`);
- anything else: "ok".

The bench recognises an answer on the terminal by such a character, never drawn before:
a renderer that redraws only the cells that changed (the reference's does, skipping even
spaces with cursor moves) may never write a repeated word whole.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from wisp.testing import ScriptedServer, reply  # noqa: E402
from wisp.testing.reply import JSON, Reply, Served  # noqa: E402
from wisp.testing.server import RecordedRequest  # noqa: E402

STREAM_CHUNKS = 400
STREAM_DELAY = 0.02
_STREAM = re.compile(r"\[\[tui:stream:([0-9a-f]+)\]\]")
_TURN = re.compile(r"\bQ(\d+)\b")
TURN_BASE = 0x4E00  # CJK ideographs: 20,000 one-per-turn marks (two cells wide)
STREAM_BASE = 0xAC00  # Hangul syllables: two marks per streamed answer
_print_lock = threading.Lock()


def turn_mark(n: int) -> str:
    return chr(TURN_BASE + n % 20000)


def stream_prompt(k: int) -> tuple[str, str, str]:
    """The prompt asking for streamed answer number `k`; the marks of its first and last
    lines."""
    code = STREAM_BASE + 2 * (k % 5000)
    return f"[[tui:stream:{code:x}]] please write a long answer", chr(code), chr(code + 1)


def stream_text(start: str, end: str) -> str:
    """About 11 KB of Markdown: paragraphs, lists, code blocks (ASCII but for the two
    marks: the bench types Greek and Cyrillic letters and looks for them)."""
    prose = ("the renderer keeps a live tail of the answer and moves finished blocks into "
             "the scrollback so that a redraw costs the same however long the answer grows "
             "while keys typed meanwhile must still reach the input line at once")
    words = prose.split(" ")
    parts = [f"Here is a long answer, streamed slowly. {start}"]
    for i in range(24):
        sentence = " ".join(words[(i * 7 + k) % len(words)] for k in range(70))
        parts.append(f"{sentence[0].upper()}{sentence[1:]}.")
        if i % 6 == 2:
            parts.append("\n".join(f"- item {i}.{k}: **{words[k]}** and `{words[k + 1]}`"
                                   for k in range(5)))
        if i % 8 == 5:
            body = "\n".join(f"    total += item_{k} * {k}  # {words[k]}" for k in range(8))
            parts.append(f"```python\ndef block_{i}(items):\n    total = 0\n{body}\n"
                         f"    return total\n```")
    parts.append(f"That is all. {end}")
    return "\n\n".join(parts)


class _StreamReply(Reply):
    def __init__(self, code: int) -> None:
        text = stream_text(chr(code), chr(code + 1))
        self._base = reply.slow(text, STREAM_DELAY, chunks=STREAM_CHUNKS)

    def render(self, body: JSON, body_size: int) -> Served:
        served = self._base.render(body, body_size)
        lasts = served.delay * (len(served.events) - 1)
        with _print_lock:
            print(f"stream {time.monotonic():.6f} {lasts:.3f}", flush=True)
        return served


def route(body: JSON) -> Reply:
    prompt = reply.last_user_text(body)
    if match := _STREAM.search(prompt):
        return _StreamReply(int(match.group(1), 16))
    if match := _TURN.search(prompt):
        n = int(match.group(1))
        return reply.text(f"ANS{n}END {turn_mark(n)}")
    return reply.text("ok")


class _CountingServer(ScriptedServer):
    """Keeps no request bodies: a long reference session sends hundreds of MB of them."""

    count = 0

    def _record(self, request: RecordedRequest) -> None:
        self.count += 1


def main() -> int:
    with _CountingServer(default=reply.dynamic(route)) as server:
        print(server.url, flush=True)
        sys.stdin.read()  # EOF: the runner has finished or died
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
