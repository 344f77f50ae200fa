"""Streaming Markdown is cut into pieces at block boundaries, whatever the deltas."""

from __future__ import annotations

import io
import random

import pytest
from prompt_toolkit.data_structures import Size

from wisp.tui.stream_text import CODE_LINES_PER_PIECE, Piece, StreamingMarkdown
from wisp.tui.terminal import BEGIN_SYNC, END_SYNC, SyncOutput

BLOCKS = [
    "A paragraph with **bold** and `code`.",
    "Two lines\nof one paragraph.",
    "- a list\n- of items",
    "# A heading",
    "```python\ndef f(x):\n    return x\n```",
    "~~~\nplain fence\n~~~",
    "```\n" + "\n".join(f"line {i}" for i in range(30)) + "\n```",
    "```js\nconst a = 1;\n\nconst b = 2;\n```",  # a blank line inside a fence is code
]


def _document(rng: random.Random) -> str:
    return "\n\n".join(rng.choice(BLOCKS) for _ in range(rng.randint(1, 8)))


def _stream(text: str, cuts: list[int]) -> list[Piece]:
    stream = StreamingMarkdown()
    pieces: list[Piece] = []
    last = 0
    for cut in [*cuts, len(text)]:
        stream.add(text[last:cut])
        pieces += stream.take()
        last = cut
    return pieces + stream.finish()


@pytest.mark.parametrize("seed", range(200))
def test_pieces_do_not_depend_on_how_the_text_was_split(seed: int) -> None:
    rng = random.Random(seed)
    text = _document(rng)
    whole = _stream(text, [])
    cuts = sorted(rng.sample(range(len(text)), min(len(text) - 1, rng.randint(1, 40))))
    assert _stream(text, cuts) == whole
    assert _stream(text, list(range(1, len(text)))) == whole  # one character at a time


@pytest.mark.parametrize("seed", range(100))
def test_no_text_is_lost_or_repeated(seed: int) -> None:
    text = _document(random.Random(seed))
    pieces = _stream(text, [])
    joined = "".join(p.text for p in pieces)
    squeezed = "".join(line for line in text.split("\n")
                       if line.strip() and not line.lstrip().startswith(("```", "~~~")))
    assert joined.replace("\n", "") == squeezed.replace("\n", "")


def test_fences_make_code_pieces_with_their_language() -> None:
    pieces = _stream("Intro.\n\n```python\nx = 1\n```\n\nAfter.", [])
    assert [(p.kind, p.text, p.language) for p in pieces] == [
        ("prose", "Intro.", ""), ("code", "x = 1", "python"), ("prose", "After.", "")]


def test_a_long_code_block_is_committed_in_runs_that_continue_each_other() -> None:
    body = "\n".join(f"line {i}" for i in range(30))
    stream = StreamingMarkdown()
    stream.add(f"```\n{body}\n")  # still open
    ready = stream.take()
    assert [len(p.text.split("\n")) for p in ready] == [CODE_LINES_PER_PIECE] * 2
    assert [p.continued for p in ready] == [False, True]
    tail = stream.tail()
    assert tail is not None and tail.kind == "code" and tail.continued


def test_the_tail_is_the_unfinished_block() -> None:
    stream = StreamingMarkdown()
    stream.add("Done paragraph.\n\nHalf a sen")
    assert [p.text for p in stream.take()] == ["Done paragraph."]
    assert stream.tail() == Piece("prose", "Half a sen")


def _output(sync: bool) -> tuple[SyncOutput, io.StringIO]:
    out = io.StringIO()
    output = SyncOutput(out, lambda: Size(rows=24, columns=80))
    output.sync = sync
    return output, out


def test_each_flush_is_one_synchronized_update() -> None:
    output, out = _output(sync=True)
    output.write("hello")
    output.flush()
    assert out.getvalue() == f"{BEGIN_SYNC}hello{END_SYNC}"


def test_one_update_holds_flushes_until_it_ends() -> None:
    output, out = _output(sync=True)
    with output.one_update():
        output.write("a")
        output.flush()
        output.write("b")
        output.flush()
        assert out.getvalue() == ""
    assert out.getvalue() == f"{BEGIN_SYNC}ab{END_SYNC}"


def test_synchronized_output_can_be_turned_off() -> None:
    output, out = _output(sync=False)
    output.write("plain")
    output.flush()
    assert out.getvalue() == "plain"
