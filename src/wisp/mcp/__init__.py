"""MCP: servers hosted inside the SDK process, reached over the control channel."""
