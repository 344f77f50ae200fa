"""From evaluated words to `PathUse`s: joining with the working directory, glob prefixes,
device files that are not worth a permission check."""

from __future__ import annotations

from wisp.paths.protected import is_harmless_device
from wisp.shell.model import PathUse, UseKind
from wisp.shell.words import Word

# The directories a command may run in: several when a `cd` may or may not have happened
# (`cd sub; rm x`), None when unknown.
Cwd = tuple[str, ...] | None

# More candidate directories than this and we stop tracking them.
_MAX_CANDIDATES = 8


def join(cwd: str, path: str) -> str:
    """`path` made absolute against `cwd`, without folding `..` (the engine does that)."""
    while path.startswith("./"):
        path = path[2:].lstrip("/")
    if path in ("", "."):
        return cwd
    return cwd.rstrip("/") + "/" + path


def union(a: Cwd, b: Cwd) -> Cwd:
    if a is None or b is None:
        return None
    merged = a + tuple(d for d in b if d not in a)
    return merged if len(merged) <= _MAX_CANDIDATES else None


def glob_directory(value: str, at: int) -> str:
    """The fixed directory before the first pattern character: `secret/*` → `secret`."""
    prefix = value[:at]
    cut = prefix.rfind("/")
    if cut < 0:
        return ""
    return prefix[:cut] if cut > 0 else "/"


# A pattern matching more files than this is judged by its fixed directory instead.
_MAX_MATCHES = 500
_MAGIC = frozenset("*?[")


def pattern_paths(value: str, cwd: str, home: str | None) -> list[tuple[str, bool]] | None:
    """What bash makes of a pattern word: brace expansion, then `~` in each alternative,
    then globbing against the filesystem as it is now. Returns (path, recursive) pairs:
    the matches themselves plus the fixed directory (recursive, for files that appear
    later), or the alternative as written when it has no pattern. None when a path cannot
    be bounded (a `..` below a wildcard, `~` with HOME unknown)."""
    from wisp.globmatch import expand_braces

    found: list[tuple[str, bool]] = []
    for alternative in expand_braces(value):
        paths = _alternative_paths(alternative, cwd, home)
        if paths is None:
            return None
        found += paths
    return found


def _alternative_paths(text: str, cwd: str, home: str | None) -> list[tuple[str, bool]] | None:
    import glob as globbing

    if text == "~" or text.startswith("~/"):
        if home is None:
            return None
        text = home + text[1:]
    absolute = text if text.startswith("/") else join(cwd, text)
    at = next((i for i, c in enumerate(absolute) if c in _MAGIC), -1)
    if at < 0:
        return [(absolute, False)]
    if "/../" in absolute[at:] or absolute.endswith("/.."):
        return None  # `*/../../x` climbs out of any fixed directory
    directory = (glob_directory(absolute, at), True)
    matches = globbing.glob(absolute)
    if len(matches) > _MAX_MATCHES:
        return [directory]
    return [*((m, False) for m in matches), directory]


def here(kind: UseKind, recursive: bool, cwd: Cwd) -> list[PathUse]:
    if cwd is None:
        return [PathUse(kind, None, recursive)]
    return [PathUse(kind, d, recursive) for d in cwd]


def assigned_reason(word: Word) -> str:
    return (f"the path {word.display} uses ${word.assigned[0]}, which the line assigns, so "
            "its value is not known")


def resolve(word: Word, kind: UseKind, recursive: bool, cwd: Cwd, *,
            redirect: bool = False, home: str | None = None) -> list[PathUse]:
    """The uses of `word` as a path. For a redirection (`redirect`), device files such as
    /dev/null are dropped; as operands they stay (`rm /dev/null` is no harmless act)."""
    if word.stands_for is not None:
        return [PathUse(kind, use.path, use.recursive or recursive) for use in word.stands_for]
    if word.procsub:
        return []
    value = word.value
    if value is None:
        return [PathUse(kind, None, recursive)]
    if word.glob >= 0:
        return _pattern_uses(value, kind, recursive, cwd, home)
    if value.startswith("/"):
        paths: tuple[str, ...] | None = (value,)
    else:
        paths = None if cwd is None else tuple(join(d, value) for d in cwd)
    if paths is None:
        return [PathUse(kind, None, recursive)]
    return [PathUse(kind, p, recursive) for p in paths if not (redirect and is_harmless_device(p))]


def _pattern_uses(value: str, kind: UseKind, recursive: bool, cwd: Cwd,
                  home: str | None) -> list[PathUse]:
    uses: list[PathUse] = []
    for base in cwd or ("/",):
        if cwd is None and not value.startswith(("/", "~", "{")):
            return [PathUse(kind, None, True)]
        found = pattern_paths(value, base, home)
        if found is None:
            return [PathUse(kind, None, True)]
        uses += [PathUse(kind, p, recursive or r) for p, r in found]
    return list(dict.fromkeys(uses))


def directory(word: Word, cwd: Cwd, cdpath: bool = False) -> Cwd:
    """Where `cd word` goes from `cwd`; None when that cannot be known."""
    value = word.value
    if value is None or word.glob >= 0 or word.stands_for is not None:
        return None
    if value.startswith("/"):
        return (value,)
    # With CDPATH set, `cd sub` may go to a directory found on it.
    if cwd is None or (cdpath and not value.startswith(("./", "../")) and value != "."):
        return None
    return tuple(dict.fromkeys(join(d, value) for d in cwd))
