"""What a served session takes from the service's configuration folder: the operator's
permission rules, and nothing else.

The configuration folder (`WISP_CONFIG_DIR`, `~/.claude` by default) is often the
operator's own. Loading it as a session's `user` settings source would hand every tenant
the operator's CLAUDE.md, skills, agents, hooks (run on the host) and MCP servers (with the
operator's credentials). A session's instructions, skills and MCP servers come from its
agent; the folder contributes only policy (`permissions`: allow, deny and ask rules, such
as `WebFetch(domain:HOST)` for an internal host).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

# The settings keys a served session honours from the operator's settings file.
POLICY_KEYS = ("permissions",)


def operator_policy(env: Mapping[str, str]) -> str | None:
    """The `--settings` value for a served session: the policy part of the operator's
    settings file as JSON text; its path when it cannot be read as a JSON object (the
    settings loader then reports what is wrong with it, as for any settings file); None
    when there is no file."""
    from wisp.settings.loader import user_settings_path

    path = user_settings_path(env)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return str(path)
    if not isinstance(doc, dict):
        return str(path)
    return json.dumps({key: doc[key] for key in POLICY_KEYS if key in doc})
