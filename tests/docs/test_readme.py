"""README.md works as pasted: every code block runs, in order, as a reader runs it.

The blocks run in one session (tests/docs/readme_session.py): a scratch copy of the
checkout as the working folder, a fresh HOME, the repository's venv on PATH as if
activated, and a `ScriptedServer` standing in for the model (ANTHROPIC_BASE_URL and
OPENAI_BASE_URL point at it, so `export ANTHROPIC_API_KEY=sk-ant-...` and `wisp -p` work
offline; it answers "echo: <prompt>"). The Quick start's `pip install .` really installs
into a venv in that copy, and the blocks after it run in that venv, as the reader's do.
Each must exit 0, and a console block's shown output must match. Blocks that cannot run
here are marked in the README source and listed as skips with their reasons; a block
waiting for an unmerged feature is expected to fail until it lands.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.docs.readme_blocks import LANGUAGES, RUNNABLE, Block, anchors, blocks, output_matches
from tests.docs.readme_session import Ran, Session
from wisp.testing import ScriptedServer, reply

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TEXT = README.read_text(encoding="utf-8")
BLOCKS = blocks(TEXT)
# A skip is a block nobody checks: keep them few, each with a reason in the README.
MAX_SKIPPED = 4
MAX_NEEDS = 2
MAX_LINES = 350
VENV_BIN = Path(sys.executable).parent
# Long enough for `pip install` from a package index in a fresh HOME (no pip cache).
BLOCK_TIMEOUT = 300


def of_marker(marker: str) -> list[Block]:
    return [b for b in BLOCKS if b.marker == marker]


def test_every_block_has_a_language_this_test_knows() -> None:
    untagged = [b.where for b in BLOCKS if not b.lang]
    unknown = [b.where for b in BLOCKS if b.lang and b.lang not in LANGUAGES]
    assert untagged == [] and unknown == [], f"known: {sorted(LANGUAGES)}"


def test_skips_are_few_and_give_a_reason() -> None:
    assert len(of_marker("skip")) <= MAX_SKIPPED, [b.where for b in of_marker("skip")]
    assert len(of_marker("needs")) <= MAX_NEEDS, [b.where for b in of_marker("needs")]
    assert all(len(b.reason) > 10 for b in of_marker("skip") + of_marker("needs"))


@pytest.mark.parametrize("block", of_marker("skip"), ids=lambda b: f"line{b.line}")
def test_skipped_block(block: Block) -> None:
    pytest.skip(f"{block.where}: {block.reason}")


def test_json_blocks_parse() -> None:
    for block in (b for b in BLOCKS if b.lang == "json"):
        json.loads(block.text)


def test_it_stays_short_enough_to_read_to_the_end() -> None:
    assert len(TEXT.splitlines()) <= MAX_LINES


def test_links_lead_somewhere() -> None:
    """Table-of-contents anchors name a heading; links into the repository name a file
    that exists (and a heading in it, for `file.md#anchor`)."""
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", TEXT):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        page = ROOT / path if path else README
        if not page.exists() or (
                anchor and anchor not in anchors(page.read_text(encoding="utf-8"))):
            broken.append(target)
    assert broken == []


@pytest.fixture
def model() -> Iterator[ScriptedServer]:
    with ScriptedServer(default=reply.echo()) as server:
        yield server


def reader_env(server: ScriptedServer, home: Path) -> dict[str, str]:
    """A reader's shell with the venv active, and no settings of ours leaking in."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "WISP_", "OPENAI_"))
           and k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    # pip's cache stays the user's: a fresh HOME would download every wheel again (the
    # official SDK's alone carries a copy of Claude Code) on each run.
    cache = os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")
    return {**env, "HOME": str(home), "VIRTUAL_ENV": str(VENV_BIN.parent),
            "PIP_CACHE_DIR": cache,
            "PATH": f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
            "ANTHROPIC_BASE_URL": server.url, "OPENAI_BASE_URL": server.openai_url}


def copy_checkout(target: Path) -> None:
    """The files of the checkout as a clone has them: tracked and not ignored."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def failure(ran: Ran) -> str | None:
    if ran.returncode != 0:
        return ran.report()
    expected = ran.block.expected_output()
    if expected is not None and not output_matches(expected, ran.stdout):
        return f"{ran.report()}\n--- expected stdout:\n{expected}"
    return None


def new_session(tmp_path: Path, server: ScriptedServer, checkout: bool) -> Session:
    home, work = tmp_path / "home", tmp_path / "wisp"
    home.mkdir()
    work.mkdir()
    if checkout:
        copy_checkout(work)
    return Session(tmp_path, work, reader_env(server, home))


@pytest.mark.timeout(1800)
def test_the_readme_runs_as_pasted(tmp_path: Path, model: ScriptedServer) -> None:
    runnable = [b for b in BLOCKS if b.lang in RUNNABLE and not b.marker]
    # The newcomer's path must be among them: the install, then wisp against the model.
    assert "pip install ." in runnable[0].text, runnable[0].where
    assert len(runnable) >= 10
    session = new_session(tmp_path, model, checkout=True)
    try:
        for block in runnable:
            problem = failure(session.run(block, BLOCK_TIMEOUT))
            assert problem is None, problem
    finally:
        session.close()
        # The venv the Quick start made is about 0.5 GB once the SDKs are in; pytest keeps
        # the last runs' folders, so only the block logs are kept.
        shutil.rmtree(session.scratch / "wisp" / ".venv", ignore_errors=True)


@pytest.mark.parametrize("block", of_marker("needs"), ids=lambda b: f"line{b.line}")
def test_block_waiting_for_a_feature(block: Block, tmp_path: Path, model: ScriptedServer,
                                     request: pytest.FixtureRequest) -> None:
    """Fails until the feature lands; then it passes, and the strict xfail says to
    remove the marker so the block joins the others."""
    request.node.add_marker(pytest.mark.xfail(
        strict=True, reason=f"{block.where} needs {block.reason}; once this passes, "
                            "remove its readme-test marker"))
    session = new_session(tmp_path, model, checkout=False)
    try:
        problem = failure(session.run(block, BLOCK_TIMEOUT))
    finally:
        session.close()
    assert problem is None, problem
