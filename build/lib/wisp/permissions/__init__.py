"""The permission engine: modes and allow/ask/deny rules, one judge for every entry point."""
