"""`wisp.jsonsafe`: the depth scan is exact on valid JSON, whatever its strings hold."""

from __future__ import annotations

import json
import random
import time

import pytest

from wisp.jsonsafe import (
    MAX_DEPTH,
    JSONTooDeep,
    encode_utf8,
    loads_bounded,
    nesting_exceeds,
)

# Strings full of what a naive scan would miscount: brackets, quotes, escapes.
TRICKY = ['a"[\\', "\\\\", '{]"', '\\"}{[', "é\u2028", "[[[[", "\\", '"']


def depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    return 0


def random_value(rng: random.Random, level: int = 0) -> object:
    roll = rng.random()
    if level > 14 or roll < 0.3:
        return rng.choice([*TRICKY, 1, None, 2.5])
    if roll < 0.65:
        return [random_value(rng, level + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(TRICKY): random_value(rng, level + 1) for _ in range(rng.randint(0, 3))}


def chain(levels: int, leaf: object) -> object:
    value = leaf
    for i in range(levels):
        value = [value, "[{", {}] if i % 2 else {"k[": value, "x": []}
    return value


def test_the_scan_matches_the_real_depth_of_random_json():
    rng = random.Random(7)
    for _ in range(2000):
        value = random_value(rng)
        text = json.dumps(value, ensure_ascii=rng.random() < 0.5)
        real = depth(value)
        for limit in {0, max(real - 1, 0), real, real + 1}:
            assert nesting_exceeds(text, limit) == (real > limit), (text, limit)
            assert nesting_exceeds(text.encode(), limit) == (real > limit)


@pytest.mark.parametrize("levels", [MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1])
@pytest.mark.parametrize("width", [1, 40])
def test_the_scan_is_exact_at_the_limit_in_deep_and_bushy_json(levels, width):
    value = [chain(levels, random.choice([1, [], {}, "]]"])) for _ in range(width)]
    text = json.dumps(value)
    assert nesting_exceeds(text, MAX_DEPTH) == (depth(value) > MAX_DEPTH)


def test_brackets_inside_strings_are_not_nesting():
    value = {"code": "[" * 10_000, "more": ['"{' * 5_000, "\\" * 301]}
    assert loads_bounded(json.dumps(value)) == value


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a":' * 100_000, "[" * 201 + "]" * 201])
def test_too_deep_is_a_value_error(text):
    with pytest.raises(JSONTooDeep):
        loads_bounded(text)
    assert issubclass(JSONTooDeep, ValueError)  # callers' `except ValueError` holds


def test_the_scan_stays_linear_on_hostile_input():
    hostile = [b'"\\"' * 300_000, b"[" * 1_000_000, b'["[' * 300_000, b"[]" * 500_000]
    for raw in hostile:
        started = time.monotonic()
        nesting_exceeds(raw, MAX_DEPTH)
        assert time.monotonic() - started < 5.0  # quadratic would take minutes


def test_lone_surrogates_are_encoded_as_replacement_characters():
    assert encode_utf8("a\udcffb\ud800") == "a\ufffdb\ufffd".encode()
    assert encode_utf8("plain é") == "plain é".encode()
