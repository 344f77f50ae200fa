"""A stdio MCP server (wire protocol alone) whose one tool, `ask`, asks the client for
input mid-call (`elicitation/create`, form mode with a schema, or URL mode when called with
`{"url": true}`) and returns the client's answer, with the capabilities the client
declared at initialize, as JSON text; called with `{"roots": true}` it asks the client for
its roots (`roots/list`) instead and returns them, with the roots notifications seen."""

from __future__ import annotations

import json
import sys

TOOL = {"name": "ask", "description": "Ask the user", "inputSchema": {"type": "object"}}
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def read():
    line = sys.stdin.readline()
    if not line:
        raise SystemExit(0)
    return json.loads(line)


def main():
    declared = None
    notified = []  # the client's notifications about its roots
    while True:
        request = read()
        method, rid = request.get("method"), request.get("id")
        if method == "initialize":
            declared = request["params"].get("capabilities")
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "elicit", "version": "1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [TOOL]}})
        elif method == "tools/call":
            arguments = request["params"].get("arguments", {})
            url = arguments.get("url")
            if arguments.get("roots"):  # the client's roots instead of a question
                send({"jsonrpc": "2.0", "id": "roots-1", "method": "roots/list"})
                answer = read()
                send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{
                    "type": "text", "text": json.dumps({
                        "roots": answer.get("result"), "error": answer.get("error"),
                        "notified": notified})}]}})
                continue
            params = ({"mode": "url", "url": "https://example.test/login",
                       "elicitationId": "e-1", "message": "Sign in, please"} if url else
                      {"message": "Who are you?", "requestedSchema": SCHEMA})
            send({"jsonrpc": "2.0", "id": "ask-1", "method": "elicitation/create",
                  "params": params})
            answer = read()
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text":
                  json.dumps({"answer": answer.get("result"), "declared": declared})}]}})
        elif rid is None and str(method).startswith("notifications/roots/"):
            notified.append(method)
        elif rid is not None:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})


main()
