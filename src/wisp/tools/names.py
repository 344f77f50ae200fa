"""The built-in tool names, importable without the tools themselves.

`system/init` lists the tools and must go out before the tool modules load; a test keeps
this list equal to what `registry.builtin_tools()` builds.
"""

BUILTIN_TOOL_NAMES: tuple[str, ...] = (
    "Bash", "Edit", "Glob", "Grep", "Read", "TodoWrite", "WebFetch", "Write",
)
ENGINE_TOOL_TASK = "Task"
ENGINE_TOOL_STRUCTURED = "StructuredOutput"
