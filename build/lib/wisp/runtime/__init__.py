"""One session of wisp, for any front end: `Runtime.open(config, sink)` builds an engine
from a plain `RuntimeConfig` and holds its environment overlay, cwd, child processes, MCP
servers, hooks and transcript. Many runtimes can live in one process.

Kept empty of imports: `wisp.runtime.facts` is on the start-up path and must not pull the
engine in. Import `wisp.runtime.runtime` and `wisp.runtime.config` directly.
"""
