"""Helpers for `bench/run.py`: wisp against the reference CLI on the same scripted server."""
