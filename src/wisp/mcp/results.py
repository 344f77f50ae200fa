"""An MCP tool's result as the model gets it: MCP content blocks as Messages API blocks,
and a size cap, since a server can answer with megabytes.

Above: `McpTool.run`. Below: `wisp.processes.output`, the same clipping and saving Bash's
output gets: past the cap the model sees the head and the tail with a marker naming the
file that holds all of it (the marker the terminal UI shows as "full output"). The cap is
Claude Code's: `MAX_MCP_OUTPUT_TOKENS` (default 25,000), counted as 4 characters a token.
"""

from __future__ import annotations

from collections.abc import Mapping

from wisp.jsontypes import JSON
from wisp.processes.output import clip, save_output
from wisp.tools.base import ToolResult

DEFAULT_MAX_TOKENS = 25_000
CHARS_PER_TOKEN = 4
# The Messages API refuses an image over 5 MB; in base64 that is a third more.
MAX_IMAGE_CHARS = 5 * 1024 * 1024 * 4 // 3


def max_output_chars(environ: Mapping[str, str]) -> int:
    try:
        tokens = int(environ.get("MAX_MCP_OUTPUT_TOKENS", ""))
    except ValueError:
        tokens = DEFAULT_MAX_TOKENS
    return (tokens if tokens > 0 else DEFAULT_MAX_TOKENS) * CHARS_PER_TOKEN


def tool_result(tool: str, result: JSON, environ: Mapping[str, str]) -> ToolResult:
    """The ToolResult for a `tools/call` result of `tool` (its wisp name)."""
    content = result.get("content")
    blocks = [_block(b) for b in content if isinstance(b, dict)] if isinstance(
        content, list) else []
    blocks = [_image_within_limit(b) for b in blocks]
    blocks = _capped(tool, blocks, max_output_chars(environ))
    return ToolResult(content=blocks or "", is_error=bool(result.get("isError")), data=blocks)


def _capped(tool: str, blocks: list[JSON], limit: int) -> list[JSON]:
    """Past `limit` characters of text, the text blocks become one: the head and the tail
    of all of it, saying where the whole is saved. Images stay as they are."""
    texts = [str(b["text"]) for b in blocks if b["type"] == "text"]
    total = sum(len(t) for t in texts)
    if total <= limit:
        return blocks
    whole = "\n".join(texts)
    saved = save_output(whole, "mcp-")
    where = (f"all of it is saved in {saved}" if saved
             else "it could not be saved (no room in the temporary folder)")
    lead = (f"[MCP tool {tool} returned {total:,} characters of text, more than the "
            f"{limit:,} allowed (MAX_MCP_OUTPUT_TOKENS × {CHARS_PER_TOKEN}); {where}. "
            "Read the file in parts, or search it with Grep.]\n\n")
    shown, _ = clip([whole], limit - len(lead), saved)
    images = [b for b in blocks if b["type"] != "text"]
    return [{"type": "text", "text": lead + shown}, *images]


def _image_within_limit(block: JSON) -> JSON:
    if block.get("type") != "image":
        return block
    data = block["source"].get("data")
    size = len(data) if isinstance(data, str) else 0
    if isinstance(data, str) and size <= MAX_IMAGE_CHARS:
        return block
    return {"type": "text", "text": f"[An image of {size:,} base64 characters was left out: "
                                    "the Messages API takes images of at most 5 MB.]"}


def _block(block: JSON) -> JSON:
    """One MCP content block as a Messages API block."""
    kind = block.get("type")
    if kind == "resource":  # an embedded resource: its text, when it has one
        resource = block.get("resource")
        if isinstance(resource, dict) and isinstance(resource.get("text"), str):
            return {"type": "text", "text": resource["text"]}
    if kind == "resource_link":
        return {"type": "text", "text": f"{block.get('name') or 'resource'}: {block.get('uri')}"}
    if kind == "image":
        return {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": block.get("mimeType"),
                "data": block.get("data"),
            },
        }
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    return {"type": "text", "text": _shown(block)}


def _shown(block: JSON) -> str:
    """A block of a kind wisp does not know, as text (repr, which a deep one can exceed
    the recursion limit in)."""
    try:
        return str(block)
    except RecursionError:
        return f"[a {str(block.get('type'))[:40]} block nested too deeply to show]"
