"""Slash commands that are not built into wisp: users' own Markdown prompt templates.

Kept apart from the front ends so that every front end (the terminal UI today, others
later) loads, lists and expands them the same way, and from the engine because a command
is only a way of writing a prompt: it expands to text before anything runs.
"""
