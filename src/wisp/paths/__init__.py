"""Where wisp keeps things on disk: the config folder, the user's config file, and
transcripts at `<config dir>/projects/<sanitised cwd>/<session-id>.jsonl`.

A leaf package (it imports nothing of wisp's but `wisp.stamps`): sessions, settings,
models, tools and the front ends all ask it, so it must sit below every one of them.

The layout and the default directory (`~/.claude`) are Claude Code's, so the official
SDKs' session helpers (`list_sessions`, `get_session_messages`, ...), which read these files
directly, see wisp's sessions with no configuration at all.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path

from wisp.stamps import is_canonical_uuid

_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]")
# Long cwds are cut and suffixed with a hash so the directory name stays a valid path
# component. The SDKs compute the same 200-character cut and hash.
MAX_SANITIZED_LENGTH = 200
_CONFIG_DIR_VARIABLES = ("CLAUDE_CONFIG_DIR", "WISP_CONFIG_DIR")


def config_dir(env: Mapping[str, str]) -> Path:
    """The one directory for wisp's config and state: settings, transcripts, agents,
    commands, history, tool output. `CLAUDE_CONFIG_DIR` first: the SDKs set it on the
    process they start (a resume from a SessionStore materialises the session into a
    temporary one) and their session helpers read it, so they and wisp always agree. Then
    `WISP_CONFIG_DIR`, to keep wisp apart from Claude Code. Else `~/.claude`, as the
    reference and the SDKs' helpers default to. An empty value counts as unset."""
    for name in _CONFIG_DIR_VARIABLES:
        value = env.get(name)
        if value:
            return Path(value).expanduser()
    return home_folder(env) / ".claude"


def config_file(env: Mapping[str, str]) -> Path:
    """The user's config file, shared with Claude Code (trust records, `userID`):
    `<config dir>/.claude.json` when a config-folder variable is set, else
    `~/.claude.json`; the reference reads the first and never the second when the
    variable is set."""
    for name in _CONFIG_DIR_VARIABLES:
        if env.get(name):
            return config_dir(env) / ".claude.json"
    return home_folder(env) / ".claude.json"


def home_folder(env: Mapping[str, str]) -> Path:
    home = env.get("HOME")
    return Path(home) if home else Path.home()


def _js_hash(text: str) -> str:
    """A 32-bit string hash in base 36, as the SDKs compute it for long project paths."""
    h = 0
    for ch in text:
        h = ((h << 5) - h + ord(ch)) & 0xFFFFFFFF
    if h >= 0x80000000:
        h -= 0x100000000
    h = abs(h)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        h, rem = divmod(h, 36)
        out = digits[rem] + out
        if h == 0:
            return out


def project_key(cwd: Path | str) -> str:
    """The directory name for a cwd: every non-alphanumeric character becomes "-"."""
    name = unicodedata.normalize("NFC", str(cwd))
    sanitized = _NON_ALNUM.sub("-", name)
    if len(sanitized) <= MAX_SANITIZED_LENGTH:
        return sanitized
    return f"{sanitized[:MAX_SANITIZED_LENGTH]}-{_js_hash(name)}"


def projects_root(env: Mapping[str, str]) -> Path:
    return config_dir(env) / "projects"


def project_dir(env: Mapping[str, str], cwd: Path | str) -> Path:
    return projects_root(env) / project_key(cwd)


def transcript_file(env: Mapping[str, str], cwd: Path | str, session_id: str) -> Path:
    return project_dir(env, cwd) / f"{session_id}.jsonl"


def is_uuid(value: str) -> bool:
    return is_canonical_uuid(value)
