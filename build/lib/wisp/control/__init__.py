"""The control channel: a payload-agnostic dispatcher plus typed handlers per subtype."""
