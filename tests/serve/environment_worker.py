"""The SDK's `EnvironmentWorker` as a process of its own, for the tests that kill it:
`python -m tests.serve.environment_worker URL KEY ENVIRONMENT_ID WORKDIR`."""

from __future__ import annotations

import asyncio
import sys


async def main(url: str, key: str, environment_id: str, workdir: str) -> None:
    import anthropic
    from anthropic.lib.environments import EnvironmentWorker

    client = anthropic.AsyncAnthropic(base_url=url, api_key=key, max_retries=0)
    worker = EnvironmentWorker(client, environment_id=environment_id, environment_key=key,
                               workdir=workdir, max_idle=None, memory_sync_interval=None)
    await worker.run()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
