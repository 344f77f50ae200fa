"""`/config set <key> <value>` and `/config unset <key>`: the user's settings file
(`<config dir>/settings.json`) edited in place.

A key may be dotted (`permissions.defaultMode`); a value is JSON when it parses as JSON
(`true`, `3`, `["a"]`), else the text as typed. The edited document is checked as wisp
checks settings when it loads them, and written atomically only if it passes: a change
that would make wisp skip the whole file is refused instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wisp.jsontypes import JSON
from wisp.tui.rules import read_settings_doc, write_atomically

if TYPE_CHECKING:
    from wisp.tui.app import TuiApp

UNSAVED = "Nothing was saved."


def parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def set_setting(path: Path, key: str, value: Any) -> None:
    """ValueError (nothing written) for an empty key or a document wisp would not load."""
    doc = read_settings_doc(path, UNSAVED)
    *parents, last = _parts(key)
    holder = doc
    for part in parents:
        child = holder.setdefault(part, {})
        if not isinstance(child, dict):
            raise ValueError(f"{key}: {part} holds {json.dumps(child)}, not an object. "
                             f"{UNSAVED}")
        holder = child
    holder[last] = value
    _write_checked(path, doc)


def unset_setting(path: Path, key: str) -> bool:
    """False when the key was not there (nothing written)."""
    doc = read_settings_doc(path, UNSAVED)
    *parents, last = _parts(key)
    holder: Any = doc
    for part in parents:
        holder = holder.get(part) if isinstance(holder, dict) else None
    if not isinstance(holder, dict) or last not in holder:
        return False
    del holder[last]
    _write_checked(path, doc)
    return True


def _parts(key: str) -> list[str]:
    parts = [p for p in key.strip().split(".")]
    if not key.strip() or any(not p for p in parts):
        raise ValueError(f"{key!r} is not a settings key (e.g. model, "
                         f"permissions.defaultMode). {UNSAVED}")
    return parts


def _write_checked(path: Path, doc: JSON) -> None:
    from wisp.settings.schema import validate_settings

    problems = validate_settings(doc)
    if problems:
        raise ValueError(f"wisp would not load that ({'; '.join(problems)}). {UNSAVED}")
    write_atomically(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def edit_config(app: TuiApp, verb: str, rest: str) -> None:
    """`/config set <key> <value>` and `/config unset <key>`, said on screen."""
    from wisp import paths
    from wisp.tui.commands import short_path

    path = paths.config_dir(app.env) / "settings.json"
    key, _, value = rest.partition(" ")
    try:
        if verb == "unset":
            done = unset_setting(path, key)
            shown = short_path(path, app.config.cwd)
            app.view.print_text(f"Removed {key} from {shown}" if done
                                else f"{key} is not set in {shown}")
            return
        if not value.strip():
            app.view.print_text("Usage: /config set <key> <value>", "yellow")
            return
        set_setting(path, key, parse_value(value.strip()))
    except ValueError as exc:
        app.view.print_text(str(exc), "red")
        return
    when = "it applies from the next session"
    chosen = parse_value(value.strip())
    if key == "model" and isinstance(chosen, str):
        model = app.runtime.set_model(chosen)  # a model is switched now as well
        when = f"this session uses {model} from now on too"
        app.invalidate()
    app.view.print_text(f"Saved {key} = {value.strip()} in {short_path(path, app.config.cwd)}; "
                        f"{when}")
