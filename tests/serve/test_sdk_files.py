"""The Files API through the official `anthropic` SDK: upload, list, metadata,
download, delete, expiry, and a 100 MB file streamed through the service without
being held in its memory."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

import pytest

from tests.serve.harness import KEYS, anthropic, serving
from wisp.testing import ScriptedServer


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory so far (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def test_files_are_uploaded_listed_downloaded_and_deleted(tmp_path: Path,
                                                          server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        client = served.client()
        uploaded = client.beta.files.upload(file=("notes.txt", b"line one\nline two\n",
                                                  "text/plain"))
        other = client.beta.files.upload(file=("dir/data.csv", io.BytesIO(b"a,b\n1,2\n")))
        expiring = client.beta.files.upload(file=("x.bin", b"\0\1"),
                                            expires_in_seconds=3600)
        listed = [f.id for f in client.beta.files.list()]
        by_id = [f.id for f in client.beta.files.list(ids=[other.id, "file_missing"])]
        metadata = client.beta.files.retrieve_metadata(uploaded.id)
        content = client.beta.files.download(uploaded.id).read()
        with pytest.raises(anthropic.NotFoundError):
            served.client(KEYS[1]).beta.files.retrieve_metadata(uploaded.id)
        deleted = client.beta.files.delete(uploaded.id)
        with pytest.raises(anthropic.NotFoundError):
            client.beta.files.download(uploaded.id)
        with pytest.raises(anthropic.BadRequestError, match="expires_in_seconds"):
            client.beta.files.upload(file=("y", b"y"), expires_in_seconds=5)
        with pytest.raises(anthropic.BadRequestError, match="scope"):
            client.beta.files.list(extra_query={"scope": "x"})
        assert list(client.beta.files.list(scope_id="sesn_none")) == []
    assert (uploaded.filename, uploaded.size_bytes, uploaded.mime_type) == (
        "notes.txt", 18, "text/plain")
    assert other.filename == "data.csv" and other.mime_type == "text/csv"
    assert expiring.expires_at is not None and uploaded.expires_at is None
    assert sorted(listed) == sorted([uploaded.id, other.id, expiring.id])
    assert by_id == [other.id]
    assert metadata.id == uploaded.id and metadata.downloadable
    assert content == b"line one\nline two\n"
    assert (deleted.id, deleted.type) == (uploaded.id, "file_deleted")
    assert not list((tmp_path / "serve" / "files").glob(f"*/{uploaded.id}"))


def test_a_100_mb_file_streams_through_the_service(tmp_path: Path,
                                                   server: ScriptedServer) -> None:
    size = 100 * 1024 * 1024
    source = tmp_path / "big.bin"
    block = hashlib.sha256(b"wisp").digest() * (1024 * 1024 // 32)
    with source.open("wb") as out:
        for i in range(size // len(block)):
            out.write(block[i % 32:] + block[:i % 32])
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    with serving(tmp_path, server) as served:
        assert served.proc is not None
        client: Any = served.client()
        client = client.with_options(timeout=300)
        before = peak_rss_mb(served.proc.pid)
        with source.open("rb") as handle:
            uploaded = client.beta.files.upload(file=("big.bin", handle))
        got = hashlib.sha256()
        with client.beta.files.with_streaming_response.download(uploaded.id) as response:
            for piece in response.iter_bytes():
                got.update(piece)
        growth = peak_rss_mb(served.proc.pid) - before
    assert uploaded.size_bytes == size
    assert got.hexdigest() == digest
    assert growth < 40, f"the service's peak memory grew by {growth:.0f} MB"
