"""Wire formats: the NDJSON frames wisp writes and reads."""
