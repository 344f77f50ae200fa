"""wisp: an open agent runtime, wire-compatible with the official Claude Agent SDKs."""

__version__ = "0.1.0"
# The version reported to SDK clients. The Python SDK warns below 2.0.0 and, with
# verbatim prompts, below 2.1.248; it enforces nothing. We report our own version
# in `wisp_version` and a protocol-compatible version in `claude_code_version`.
PROTOCOL_VERSION = "2.1.332"

__all__ = ["PROTOCOL_VERSION", "__version__"]
