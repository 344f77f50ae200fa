"""MCP: servers wisp starts itself (stdio) and servers hosted inside the SDK process
(reached over the control channel), behind one client protocol (`client.McpServer`)."""
