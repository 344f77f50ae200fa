"""Store calls from async code, kept off the event loop where they would block it.

The `Store` is synchronous. On PostgreSQL every call is a network round trip (or waits
on a row lock), and made on the event loop it stalls every request and SSE stream of the
process meanwhile. `off_loop(store, call, *args)` runs such a call on the store's thread
pool (`blocking_executor`, which `PostgresStore` has) and awaits it; a store without one
(SQLite: a local file, calls of microseconds, where the hop to a thread would cost more
than the call) runs it inline, exactly as a direct call would.

`call` may be one store method or a function of several store calls (and no event-loop
objects: it runs on another thread), which then costs one hop instead of several.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import Executor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


def executor_of(store: object) -> Executor | None:
    """The thread pool a store's calls should run on, if they block (None: inline)."""
    executor = getattr(store, "blocking_executor", None)
    return executor if isinstance(executor, Executor) else None


async def off_loop(store: object, call: Callable[P, T], *args: P.args,
                   **kwargs: P.kwargs) -> T:
    """`call(*args, **kwargs)`, on `store`'s thread pool when it has one."""
    executor = executor_of(store)
    if executor is None:
        return call(*args, **kwargs)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(executor, functools.partial(call, *args, **kwargs))
