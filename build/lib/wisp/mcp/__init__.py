"""MCP: servers wisp starts itself (stdio), servers it reaches over HTTP (streamable
HTTP and the legacy HTTP+SSE transport) and servers hosted inside the SDK process (reached
over the control channel), behind one client protocol (`client.McpServer`)."""
