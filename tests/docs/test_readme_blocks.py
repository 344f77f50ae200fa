"""The README block parser sees what the README test relies on it to see."""

from __future__ import annotations

import pytest

from tests.docs.readme_blocks import MarkdownError, anchors, blocks, output_matches

SAMPLE = """# Title

<!-- readme-test: skip (needs a terminal of its own) -->
```bash
wisp
```

```console
$ echo hi
$ echo there
hi
there
```

```
untagged
```
"""


def test_it_finds_blocks_with_language_line_and_marker() -> None:
    skip, console, untagged = blocks(SAMPLE)
    assert (skip.line, skip.lang, skip.text) == (4, "bash", "wisp")
    assert (skip.marker, skip.reason) == ("skip", "needs a terminal of its own")
    assert console.script() == "echo hi\necho there"
    assert console.expected_output() == "hi\nthere"
    assert untagged.lang == "" and untagged.marker == ""


def test_a_console_block_without_output_expects_none() -> None:
    (block,) = blocks("```console\n$ true\n```\n")
    assert block.expected_output() is None


@pytest.mark.parametrize("text", [
    "<!-- readme-test: skip (reason) -->\n\n```bash\ntrue\n```\n",  # not right before
    "<!-- readme-test: later (reason) -->\n```bash\ntrue\n```\n",  # unknown kind
    "<!-- readme-test: skip -->\n```bash\ntrue\n```\n",  # no reason
    "```bash\ntrue\n",  # never closed
])
def test_broken_conventions_are_errors(text: str) -> None:
    with pytest.raises(MarkdownError):
        blocks(text)


def test_output_matching_with_ellipsis() -> None:
    assert output_matches("working folder: ...\nok", "working folder: /tmp/x\nok\n")
    assert output_matches("a\n...\nz", "a\nb\nc\nz")
    assert not output_matches("a\nz", "a\nb\nz")
    assert not output_matches("echo: hello", "echo: hello there")


def test_anchors_follow_github_and_skip_code() -> None:
    text = "## wisp.sdk: the agent inside\n```bash\n# not a heading\n```\n## Quick start\n"
    assert anchors(text) == {"wispsdk-the-agent-inside", "quick-start"}
