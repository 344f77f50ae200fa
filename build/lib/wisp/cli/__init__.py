"""Command line: argv → Options → a mode (print, duplex stream, version)."""
