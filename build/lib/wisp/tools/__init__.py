"""Built-in tools: one module per tool, each a `Tool` subclass with a JSON input schema."""
