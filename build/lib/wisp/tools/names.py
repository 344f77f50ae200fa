"""The built-in tool names, importable without the tools themselves.

They live in `wisp.tools.registry`, the one table of tools (which imports no tool); this
module re-exports them for existing importers.
"""

from wisp.tools.registry import BUILTIN_TOOL_NAMES, ENGINE_TOOL_STRUCTURED, ENGINE_TOOL_TASK

__all__ = ["BUILTIN_TOOL_NAMES", "ENGINE_TOOL_STRUCTURED", "ENGINE_TOOL_TASK"]
