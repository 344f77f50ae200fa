"""A stdio MCP server that answers tool calls with what no client should trust: results
of megabytes, replies nested far deeper than a JSON parser recurses, replies that are not
JSON, and silence. Written against the wire protocol alone (no `mcp` package).

Tools: `big` (`{"chars": N}`: one text block of N characters, ending in "END"), `deep`
(a reply nested 100,000 deep that names its id), `deep_anonymous` (nested 100,000 deep
with no id to be read), `invalid` (broken JSON that names its id), `silent` (never
answers), `echo` (`{"text": …}`, to show the server still works afterwards).
"""

from __future__ import annotations

import json
import sys

DEPTH = 100_000
TOOLS = [{"name": name, "description": name, "inputSchema": {"type": "object"}}
         for name in ("big", "deep", "deep_anonymous", "invalid", "silent", "echo")]


def write(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def send(message: dict) -> None:
    write(json.dumps(message))


def text(request_id: object, value: str) -> None:
    send({"jsonrpc": "2.0", "id": request_id,
          "result": {"content": [{"type": "text", "text": value}]}})


def call(request: dict) -> None:
    name, args, rid = request["params"]["name"], request["params"]["arguments"], request["id"]
    if name == "big":
        chars = int(args["chars"])
        text(rid, "x" * (chars - 3) + "END")
    elif name == "deep":
        write(f'{{"jsonrpc":"2.0","id":{json.dumps(rid)},"result":{{"content":'
              + "[" * DEPTH + "]" * DEPTH + "}}")
    elif name == "deep_anonymous":
        write("[" * DEPTH + "]" * DEPTH)
    elif name == "invalid":
        write(f'{{"jsonrpc":"2.0","id":{json.dumps(rid)},"result":{{content: oops}}}}')
    elif name == "echo":
        text(rid, str(args.get("text", "")))
    # silent: no answer at all


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        method = request.get("method")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": request["id"], "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": request["id"], "result": {"tools": TOOLS}})
        elif method == "tools/call":
            call(request)


if __name__ == "__main__":
    main()
