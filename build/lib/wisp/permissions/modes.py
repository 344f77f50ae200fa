"""The permission modes a session can be in. Import-light: the early initialize answer and
argv parsing need them before the engine loads."""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

PermissionMode = Literal["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"]
PERMISSION_MODES: tuple[PermissionMode, ...] = get_args(PermissionMode)
BYPASS: PermissionMode = "bypassPermissions"


def is_permission_mode(value: object) -> TypeGuard[PermissionMode]:
    return value in PERMISSION_MODES
