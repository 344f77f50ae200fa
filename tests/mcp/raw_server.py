"""A stdio MCP server written against the wire protocol alone (no `mcp` package), for the
cases a well-behaved server never produces: junk on stdout, requests to the client, a
crash, silence. Modes come from argv[1]:

- `serve` (default): tools `echo` (read-only), `probe` (asks the client `ping` and
  `roots/list` and returns both answers), `grow` (announces tools/list_changed and adds
  `extra`), `crash` (writes to stderr and exits 3 mid-call), `wait` (never answers).
  With RAW_LOG set, the method of every message received is appended there.
- `mute`: reads requests and never answers (start-up must time out).

With RAW_PID_FILE set, each start appends its pid there.
"""

from __future__ import annotations

import json
import os
import sys

TOOLS = [
    {"name": "echo", "description": "Echo the text", "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "probe", "description": "Ask the client things", "inputSchema": {"type": "object"}},
    {"name": "grow", "description": "Add a tool", "inputSchema": {"type": "object"}},
    {"name": "crash", "description": "Die mid-call", "inputSchema": {"type": "object"}},
    {"name": "wait", "description": "Never answer", "inputSchema": {"type": "object"}},
]
EXTRA = {"name": "extra", "description": "Added later", "inputSchema": {"type": "object"}}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def read():
    line = sys.stdin.readline()
    if not line:
        raise SystemExit(0)
    message = json.loads(line)
    log = os.environ.get("RAW_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as out:
            out.write(f"{message.get('method')}\n")
    return message


def text(request_id, value):
    send({"jsonrpc": "2.0", "id": request_id,
          "result": {"content": [{"type": "text", "text": value}]}})


def call(request, tools):
    name = request["params"]["name"]
    if name == "echo":
        text(request["id"], request["params"]["arguments"].get("text", ""))
    elif name == "probe":
        send({"jsonrpc": "2.0", "id": "s1", "method": "ping"})
        send({"jsonrpc": "2.0", "id": "s2", "method": "roots/list"})
        answers = [read(), read()]
        text(request["id"], json.dumps(sorted(answers, key=lambda a: a["id"])))
    elif name == "grow":
        tools.append(EXTRA)
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        text(request["id"], "grown")
    elif name == "crash":
        sys.stderr.write("raw server: something broke\n")
        sys.stderr.flush()
        os._exit(3)
    elif name == "wait":
        return  # the client's interrupt must not depend on an answer
    else:
        text(request["id"], f"called {name}")


def serve():
    tools = list(TOOLS)
    sys.stdout.write("this line is not JSON-RPC and must be skipped\n")
    while True:
        request = read()
        method, request_id = request.get("method"), request.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": request_id, "result": {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "raw", "version": "0.1"}}})
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": "hello"}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": tools}})
        elif method == "tools/call":
            call(request, tools)
        elif request_id is not None:
            send({"jsonrpc": "2.0", "id": request_id,
                  "error": {"code": -32601, "message": f"no {method}"}})


if __name__ == "__main__":
    pid_file = os.environ.get("RAW_PID_FILE")
    if pid_file:
        with open(pid_file, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()}\n")
    if sys.argv[1:] == ["mute"]:
        while sys.stdin.readline():
            pass
    else:
        serve()
