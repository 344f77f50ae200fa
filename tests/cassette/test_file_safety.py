"""A cassette is always whole lines: one `write` per exchange, O_APPEND, so concurrent
writers (tasks, threads, processes) never interleave and a killed writer loses at most
the exchange it was writing."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.cassette.helpers import drain, request, text_of
from wisp.models.cassette import append_line
from wisp.testing import RecordingModel, ReplayModel, ScriptedModel, load_cassette, reply

ROOT = Path(__file__).resolve().parents[2]
ENV = {"HOME": "/nonexistent-home"}

WRITER = textwrap.dedent("""
    import asyncio, sys
    from wisp.models.base import ModelRequest
    from wisp.testing import RecordingModel, ScriptedModel, reply

    path, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    model = RecordingModel(ScriptedModel(default=reply.text(tag * 40_000, chunks=40)), path,
                           env={"HOME": "/h"})

    async def main():
        n = 0
        while count < 0 or n < count:
            req = ModelRequest(model="m", messages=[{"role": "user", "content": f"{tag}{n}"}],
                               max_tokens=10)
            async with model.stream(req) as stream:
                async for _ in stream:
                    pass
            n += 1

    asyncio.run(main())
""")


def writer(path: Path, tag: str, count: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, str(count)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def whole_lines(path: Path) -> list[dict]:
    raw = path.read_bytes()
    body, _, tail = raw.rpartition(b"\n")
    lines = [json.loads(line) for line in body.split(b"\n") if line] if body else []
    if tail:  # killed inside its one write: only that exchange is lost, and it is skipped
        assert len(load_cassette(path)) == len(lines)
    return lines


def test_a_killed_writer_leaves_whole_lines(tmp_path: Path) -> None:
    cassette = tmp_path / "killed.jsonl"
    proc = writer(cassette, "k", -1)
    deadline = time.monotonic() + 30
    try:
        while not cassette.exists() or cassette.read_bytes().count(b"\n") < 5:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the writer wrote nothing"
            time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if proc.stderr:
            proc.stderr.close()
    lines = whole_lines(cassette)
    assert len(lines) >= 5
    assert all(line["ended"] == "complete" and line["events"] for line in lines)


def test_an_append_after_a_torn_line_starts_a_line_of_its_own(tmp_path: Path) -> None:
    cassette = tmp_path / "torn.jsonl"
    model = RecordingModel(ScriptedModel(reply.text("a"), reply.text("b")), cassette, env=ENV)
    asyncio.run(drain(model, request("first")))
    with cassette.open("ab") as file:  # what a writer killed inside its write leaves
        file.write(cassette.read_bytes()[:50])
    asyncio.run(drain(model, request("second")))
    raw = cassette.read_bytes().split(b"\n")
    assert len(raw) == 4 and raw[-1] == b"" and len(raw[1]) == 50
    assert [e["request"]["messages"][0]["content"] for e in load_cassette(cassette)] == [
        "first", "second"]
    replay = ReplayModel.from_file(cassette, env=ENV)
    assert text_of(asyncio.run(drain(replay, request("second")))) == "b"


def test_concurrent_writers_never_interleave(tmp_path: Path) -> None:
    cassette = tmp_path / "shared.jsonl"
    procs = [writer(cassette, tag, 15) for tag in "xyz"]  # three processes, ~120 kB lines

    model = RecordingModel(ScriptedModel(default=reply.text("w" * 50_000, chunks=20)),
                           cassette, env=ENV)

    async def tasks() -> None:  # and twenty tasks of this process at once
        await asyncio.gather(*(drain(model, request(f"task {i}")) for i in range(20)))

    asyncio.run(tasks())
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
    raw = cassette.read_bytes()
    assert raw.endswith(b"\n")
    lines = [json.loads(line) for line in raw.splitlines()]
    assert len(lines) == 3 * 15 + 20
    prompts = sorted(line["request"]["messages"][0]["content"] for line in lines)
    assert prompts == sorted([f"{t}{n}" for t in "xyz" for n in range(15)]
                             + [f"task {i}" for i in range(20)])


def test_append_line_from_threads(tmp_path: Path) -> None:
    import threading

    path = str(tmp_path / "threads.jsonl")

    def write(tag: int) -> None:
        for n in range(20):
            append_line(path, json.dumps({"t": tag, "n": n, "pad": "p" * 100_000}).encode()
                        + b"\n")

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = [json.loads(line) for line in Path(path).read_bytes().splitlines()]
    assert sorted((line["t"], line["n"]) for line in lines) == [
        (t, n) for t in range(8) for n in range(20)]
