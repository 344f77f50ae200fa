"""`wisp serve`: the Managed Agents session service (agents, environments, sessions and
their event logs over HTTP + SSE), the remote face of the same agent loop. The official
`anthropic` SDK's `client.beta.{agents,environments,sessions}` drive it unchanged but for
`base_url` and the API key. Nothing here loads unless `wisp serve` runs."""
