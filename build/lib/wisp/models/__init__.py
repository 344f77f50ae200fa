"""Model providers. Each exposes one streaming method; the full message is a fold of it."""
