"""The fenced code blocks of a Markdown file, with the markers that say how to test them.

Above: tests/docs/test_readme.py runs what this finds. Below: plain text; no Markdown
library, because the README's own conventions are all there is to parse:

- every block has a language tag: ```bash, ```sh, ```console (`$ ` lines are commands,
  the other lines their expected stdout, where `...` stands for anything), ```python or
  ```json (parsed, not run);
- an HTML comment on the line right before a block may mark it:
  `<!-- readme-test: skip (reason) -->` for a block that cannot run in a test, or
  `<!-- readme-test: needs (feature) -->` for one waiting for a feature not merged yet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SHELL = frozenset({"bash", "sh", "console"})
RUNNABLE = SHELL | {"python"}
LANGUAGES = RUNNABLE | {"json"}
MARKER = re.compile(r"<!--\s*readme-test:\s*(?P<kind>\w+)\s*\((?P<reason>[^)]+)\)\s*-->")
FENCE = re.compile(r"^```(?P<lang>\S*)\s*$")


@dataclass(frozen=True)
class Block:
    line: int  # 1-based line of the opening fence
    lang: str  # "" when the fence has no tag
    text: str
    marker: str = ""  # "", "skip" or "needs"
    reason: str = ""

    @property
    def where(self) -> str:
        return f"README.md:{self.line} ({self.lang or 'no language'})"

    def script(self) -> str:
        """What runs: a console block's `$ ` commands, any other block as written."""
        if self.lang != "console":
            return self.text
        return "\n".join(line[2:] for line in self.text.splitlines() if line.startswith("$ "))

    def expected_output(self) -> str | None:
        """A console block's output lines; None when it shows none."""
        if self.lang != "console":
            return None
        lines = [line for line in self.text.splitlines() if not line.startswith("$ ")]
        return "\n".join(lines) if any(line.strip() for line in lines) else None


class MarkdownError(ValueError):
    """The file breaks one of the conventions above."""


def blocks(markdown: str) -> list[Block]:
    found: list[Block] = []
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            _check_stray_marker(lines, index)
            index += 1
            continue
        end = _closing_fence(lines, index)
        marker, reason = _marker_before(lines, index)
        found.append(Block(index + 1, opening["lang"], "\n".join(lines[index + 1:end]),
                           marker, reason))
        index = end + 1
    return found


def _closing_fence(lines: list[str], start: int) -> int:
    for index in range(start + 1, len(lines)):
        if lines[index].rstrip() == "```":
            return index
    raise MarkdownError(f"README.md:{start + 1}: a code block that never closes")


def _marker_before(lines: list[str], fence: int) -> tuple[str, str]:
    if fence == 0 or "readme-test" not in lines[fence - 1]:
        return "", ""
    match = MARKER.fullmatch(lines[fence - 1].strip())
    if match is None or match["kind"] not in ("skip", "needs"):
        raise MarkdownError(f"README.md:{fence}: a readme-test marker must be "
                            "`<!-- readme-test: skip|needs (reason) -->`")
    return match["kind"], match["reason"].strip()


def _check_stray_marker(lines: list[str], index: int) -> None:
    """A marker must sit right before a fence, or it marks nothing (and is a typo)."""
    if "readme-test" in lines[index] and (
            index + 1 >= len(lines) or FENCE.match(lines[index + 1]) is None):
        raise MarkdownError(f"README.md:{index + 1}: a readme-test marker that is not "
                            "right before a code block")


def output_matches(expected: str, actual: str) -> bool:
    """Whether `actual` is `expected` with each `...` standing for any text (newlines
    too); trailing spaces on each line and blank lines at the ends do not count."""
    def tidy(text: str) -> str:
        return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())

    pattern = ".*?".join(re.escape(piece) for piece in tidy(expected).split("..."))
    return re.fullmatch(pattern, tidy(actual), re.DOTALL) is not None


_HEADING = re.compile(r"^#{1,6} (?P<title>.+?)\s*$")


def anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the file's headings (code blocks' `#` lines are not
    headings): lower case, punctuation dropped, spaces to hyphens."""
    found: set[str] = set()
    in_code = False
    for line in markdown.splitlines():
        if FENCE.match(line) or line.rstrip() == "```":
            in_code = not in_code
            continue
        heading = None if in_code else _HEADING.match(line)
        if heading:
            title = heading["title"].lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found
