"""What a Grep asks and finds, and the pure-Python engine.

ripgrep (`_grep_rg`) runs wherever wisp's wheel or PATH has it; this engine runs where
neither does, and only ever in a child process (`_grep_worker`): Python's `re` backtracks,
so a pattern like `(a+)+$` can run for hours holding the GIL, and in wisp's own process
that would leave no thread free to answer SIGTERM. Both engines return the same `Hits`,
so the tool filters and formats results identically whichever ran.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from wisp.globmatch import GlobMatcher
from wisp.tools._fs import BINARY_SNIFF_BYTES, looks_binary, pruned

Mode = Literal["files_with_matches", "content", "count"]

MAX_LINE_CHARS = 500
# Files bigger than this are skipped by the fallback rather than loaded whole.
MAX_FILE_BYTES = 20_000_000
# Cap on an engine's output we are willing to hold; results are truncated past it.
MAX_ENGINE_OUTPUT = 20_000_000
# However long a search runs (either engine), it ends with an error at this point.
SEARCH_TIMEOUT_S = 60.0

# A small subset of ripgrep's --type table, for the fallback.
TYPE_GLOBS: dict[str, tuple[str, ...]] = {
    "py": ("*.py", "*.pyi"),
    "js": ("*.js", "*.mjs", "*.cjs", "*.jsx"),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "rust": ("*.rs",),
    "go": ("*.go",),
    "java": ("*.java",),
    "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h"),
    "md": ("*.md", "*.markdown"),
    "markdown": ("*.md", "*.markdown"),
    "json": ("*.json",),
    "yaml": ("*.yaml", "*.yml"),
    "toml": ("*.toml",),
    "sh": ("*.sh", "*.bash", "*.zsh"),
    "html": ("*.html", "*.htm"),
    "css": ("*.css", "*.scss", "*.sass", "*.less"),
    "ruby": ("*.rb",),
    "php": ("*.php",),
    "kotlin": ("*.kt", "*.kts"),
    "swift": ("*.swift",),
    "sql": ("*.sql",),
    "xml": ("*.xml",),
    "txt": ("*.txt",),
}


@dataclass
class Query:
    pattern: str
    root: Path
    mode: Mode = "files_with_matches"
    glob: str | None = None
    file_type: str | None = None
    ignore_case: bool = False
    line_numbers: bool = True
    before: int = 0
    after: int = 0
    multiline: bool = False

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "root": str(self.root)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Query:
        return cls(**{**data, "root": Path(data["root"])})


@dataclass
class Hits:
    """What a search found. Content mode keeps each file's lines apart (`groups`), so a
    file can be dropped whole and the separators between files are drawn afterwards."""

    files: list[str] = field(default_factory=list)
    groups: list[tuple[str, list[str]]] = field(default_factory=list)
    counts: list[tuple[str, int]] = field(default_factory=list)

    def lines(self, separated: bool) -> list[str]:
        """Content mode's lines; with context (`separated`), "--" between files, as grep
        and ripgrep print them."""
        out: list[str] = []
        for _path, lines in self.groups:
            if out and separated:
                out.append("--")
            out.extend(lines)
        return out

    def kept(self, may_read: Callable[[str], bool]) -> Hits:
        """Only the files `may_read` allows (asked with each file's real path): a search
        over a folder never returns what a Read deny rule covers below it."""
        verdicts: dict[str, bool] = {}

        def ok(path: str) -> bool:
            if path not in verdicts:
                verdicts[path] = may_read(os.path.realpath(path))
            return verdicts[path]

        return Hits([f for f in self.files if ok(f)], [g for g in self.groups if ok(g[0])],
                    [c for c in self.counts if ok(c[0])])


class FileFilter:
    """rg-style `--glob`: whitespace-separated patterns, `!` negates; a pattern without '/'
    matches the file name, one with '/' the path relative to the search root."""

    def __init__(self, glob: str | None, file_type: str | None) -> None:
        self.include: list[tuple[GlobMatcher, bool]] = []
        self.exclude: list[tuple[GlobMatcher, bool]] = []
        for token in (glob or "").split():
            target = self.exclude if token.startswith("!") else self.include
            bare = token.lstrip("!")
            target.append((GlobMatcher(bare), "/" in bare))
        self.types = [GlobMatcher(g) for g in TYPE_GLOBS.get(file_type or "", ())]

    def accepts(self, rel: str, name: str) -> bool:
        def hit(matcher: GlobMatcher, by_path: bool) -> bool:
            return matcher.match(rel if by_path else name)

        if any(hit(m, p) for m, p in self.exclude):
            return False
        if self.include and not any(hit(m, p) for m, p in self.include):
            return False
        return not self.types or any(m.match(name) for m in self.types)


def _candidates(query: Query) -> Iterator[Path]:
    if query.root.is_file():
        return iter([query.root])
    return _walk(query.root, "", FileFilter(query.glob, query.file_type), query.glob or "")


def _walk(directory: Path, rel_dir: str, keep: FileFilter, glob: str) -> Iterator[Path]:
    """Files under `directory`, each directory's entries in name order with files and
    subdirectories interleaved: the order `rg --sort=path` prints, so engines agree."""
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        rel = f"{rel_dir}{entry.name}"
        if entry.is_dir(follow_symlinks=False):
            if pruned([entry.name], glob):
                yield from _walk(Path(entry.path), rel + "/", keep, glob)
        elif entry.is_file(follow_symlinks=False) and keep.accepts(rel, entry.name):
            yield Path(entry.path)


def _load_text(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        raw = path.read_bytes()
    except OSError:
        return None
    if looks_binary(raw[:BINARY_SNIFF_BYTES]):
        return None
    return raw.decode("utf-8", errors="replace")


def _matched_lines(regex: re.Pattern[str], text: str, lines: list[str], multi: bool) -> list[int]:
    if not multi:
        return [i for i, line in enumerate(lines) if regex.search(line)]
    starts = [0]
    starts.extend(i + 1 for i, c in enumerate(text) if c == "\n")
    hit: set[int] = set()
    for m in regex.finditer(text):
        first = bisect.bisect_right(starts, m.start()) - 1
        last = bisect.bisect_right(starts, max(m.end() - 1, m.start())) - 1
        hit.update(range(first, last + 1))
    return sorted(i for i in hit if i < len(lines))


def _format_line(label: str, number: int, line: str, sep: str, numbered: bool) -> str:
    if len(line) > MAX_LINE_CHARS:
        line = line[:MAX_LINE_CHARS] + " [... line truncated]"
    prefix = [label] if label else []
    if numbered:
        prefix.append(str(number))
    return sep.join([*prefix, line]) if prefix else line


def _render(label: str, lines: list[str], matched: list[int], query: Query) -> list[str]:
    """grep-style output: ':' after matching lines, '-' after context, '--' between groups."""
    out: list[str] = []
    matched_set = set(matched)
    last = -1
    for i in matched:
        lo = max(0, i - query.before, last + 1)
        hi = min(len(lines) - 1, i + query.after)
        if out and lo > last + 1 and (query.before or query.after):
            out.append("--")
        for j in range(lo, hi + 1):
            sep = ":" if j in matched_set else "-"
            out.append(_format_line(label, j + 1, lines[j], sep, query.line_numbers))
        last = max(last, hi)
    return out


def compile_pattern(query: Query) -> re.Pattern[str]:
    flags = re.MULTILINE
    if query.ignore_case:
        flags |= re.IGNORECASE
    if query.multiline:
        flags |= re.DOTALL
    return re.compile(query.pattern, flags)


def search_python(query: Query, budget: int = MAX_ENGINE_OUTPUT) -> Hits:
    """The fallback engine; it stops once content lines pass `budget` characters, as
    ripgrep's output is cut at the same cap. Raises re.error for a bad pattern."""
    regex = compile_pattern(query)
    hits = Hits()
    single_file = query.root.is_file()
    for path in _candidates(query):
        text = _load_text(path)
        if text is None:
            continue
        lines = [line.rstrip("\r") for line in text.split("\n")]
        if text.endswith("\n"):
            lines.pop()
        if query.mode == "files_with_matches" and not query.multiline:
            if any(regex.search(line) for line in lines):
                hits.files.append(str(path))
            continue
        matched = _matched_lines(regex, text, lines, query.multiline)
        if not matched:
            continue
        hits.files.append(str(path))
        hits.counts.append((str(path), len(matched)))
        if query.mode == "content":
            label = "" if single_file else str(path)
            rendered = _render(label, lines, matched, query)
            hits.groups.append((str(path), rendered))
            budget -= sum(len(line) + 1 for line in rendered)
            if budget < 0:
                break
    return hits
