"""The chunked-transfer decoder on generated bodies, cut at every possible read boundary."""

from __future__ import annotations

import random

import pytest

from wisp.errors import StreamCutError
from wisp.models.chunked import ChunkedDecoder


def encode(pieces: list[bytes], *, extension: bool = False, trailers: bytes = b"") -> bytes:
    out = b""
    for piece in pieces:
        size = f"{len(piece):x}".encode() + (b";ext=1" if extension else b"")
        out += size + b"\r\n" + piece + b"\r\n"
    return out + b"0\r\n" + trailers + b"\r\n"


def decode_in_reads(wire: bytes, cuts: list[int]) -> tuple[bytes, ChunkedDecoder]:
    decoder = ChunkedDecoder()
    out = b""
    start = 0
    for cut in [*sorted(cuts), len(wire)]:
        out += decoder.feed(wire[start:cut])
        start = cut
    return out, decoder


@pytest.mark.parametrize("seed", range(40))
def test_any_split_of_any_body_decodes_to_the_payload(seed: int) -> None:
    rng = random.Random(seed)
    pieces = [rng.randbytes(rng.randint(1, 300)) + b"\n" * rng.randint(0, 2)
              for _ in range(rng.randint(1, 12))]
    wire = encode(pieces, extension=seed % 3 == 0,
                  trailers=b"x-trailer: 1\r\n" if seed % 4 == 0 else b"")
    cuts = rng.sample(range(1, len(wire)), k=min(len(wire) - 1, rng.randint(0, 30)))
    out, decoder = decode_in_reads(wire, cuts)
    assert out == b"".join(pieces)
    assert decoder.done and decoder.complete


def test_every_single_byte_boundary() -> None:
    pieces = [b"event: a\ndata: {}\n\n", b"x" * 17, b"\r\n\r\n"]
    wire = encode(pieces)
    out, decoder = decode_in_reads(wire, list(range(1, len(wire))))
    assert out == b"".join(pieces) and decoder.complete


def test_a_body_cut_inside_a_chunk_says_how_much_is_missing() -> None:
    wire = encode([b"hello world"])
    decoder = ChunkedDecoder()
    assert decoder.feed(wire[:8]) == b"hello"  # "b\r\n" then five of the eleven bytes
    assert not decoder.done
    assert decoder.missing() == "6 bytes of the body missing"


def test_a_body_cut_after_the_last_chunk_is_done_but_not_reusable() -> None:
    wire = encode([b"abc"])
    decoder = ChunkedDecoder()
    decoder.feed(wire[:-2])  # the final CRLF never came
    assert decoder.done and not decoder.complete


@pytest.mark.parametrize("line", [b"zz\r\n", b"-5\r\n", b"\r\n"])
def test_a_malformed_size_line_is_a_stream_error(line: bytes) -> None:
    with pytest.raises(StreamCutError, match="Malformed chunked encoding"):
        ChunkedDecoder().feed(line)


def test_an_endless_framing_line_is_refused() -> None:
    with pytest.raises(StreamCutError, match="overlong"):
        ChunkedDecoder().feed(b"1" * (70 * 1024))
