"""System prompt assembly."""
