"""Hooks: settings shell commands and SDK callbacks, run by one runner with one merge rule."""
