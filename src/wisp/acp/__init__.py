"""`wisp acp`: wisp in editors, over the Agent Client Protocol (see docs/acp.md).

Front end like `duplex/` and `tui/`: it drives `Runtime`s and imports no other front end.
`server` reads the editor's pipe, `rpc` frames JSON-RPC, `agent` routes methods,
`session` holds one conversation, `updates` and `content` translate both ways.
"""
