"""`update_environment_variables` frames: a host changes the session's environment while
it runs (a refreshed API key, a proxy). Tools, hooks and MCP servers started from then on
see the new values, and the next model request is made with them.

The host owns the process, so most variables are taken; refused are those that would
relax wisp's own checks or move its files mid-session (`REFUSED`), each reported on
stderr, as is a frame whose `variables` is not an object of strings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wisp.diagnostics import warn
from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.duplex.server import DuplexServer

REFUSED = frozenset({"IS_SANDBOX", "WISP_TRUST_PROJECT", "HOME", "WISP_CONFIG_DIR",
                     "CLAUDE_CONFIG_DIR"})


def apply_env_update(server: DuplexServer, frame: JSON) -> None:
    variables = frame.get("variables")
    if not isinstance(variables, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and "\0" not in v
            for k, v in variables.items()):
        warn("wisp: update_environment_variables: variables must be an object of string "
             "values; nothing was changed\n")
        return
    refused = sorted(k for k in variables if k in REFUSED)
    if refused:
        warn(f"wisp: update_environment_variables: refused {', '.join(refused)} (they would "
             "relax wisp's checks or move its files mid-session)\n")
    taken = {k: v for k, v in variables.items() if k not in REFUSED}
    if not taken:
        return
    server.env.update(taken)
    server.runtime.environment_changed()
