"""Identities and timestamps shared by the engine, the transcript and the projections."""

from __future__ import annotations

import time
import uuid


def new_uuid() -> str:
    return str(uuid.uuid4())


def iso_now() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"
