"""Names for whoever holds a store lease: a worker process, or a request holding an
`exclusive` section. host:pid:nonce, so that a worker of the same host can tell the
holder has died (`dead_here`) and let its leases go at once instead of when they expire.
"""

from __future__ import annotations

import os
import secrets
import socket


def worker_name() -> str:
    """host:pid:nonce: a worker of the same host can tell that the holder has died."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def dead_here(worker: str) -> bool:
    """Whether `worker` (host:pid:nonce) was a process of this host that is gone."""
    host, _, rest = worker.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
