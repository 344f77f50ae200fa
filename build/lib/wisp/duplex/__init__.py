"""The duplex stream-json session that the official SDKs drive over stdin/stdout."""
