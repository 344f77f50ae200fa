"""The `memory` tool a session's agent gets when memory stores are attached to it.

Its input is the memory tool's as the SDK models it (`BetaMemoryTool20250818Command`:
`view`, `create`, `str_replace`, `insert`, `delete`, `rename`), with paths under each
attached store's `mount_path` (`/mnt/memory/<slug>/notes.md` is the memory `/notes.md`
of that store). It runs here, in every environment: it touches no file of the host,
only the store, and every write is a memory version by a `session_actor` (this session).
A `read_only` attachment refuses writes; an archived store refuses them too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from wisp.jsontypes import JSON
from wisp.serve.http import HttpError
from wisp.serve.memory import MemoryStores, session_actor
from wisp.serve.shapes import ShapeError
from wisp.serve.shapes import memory as memory_shapes
from wisp.serve.store.base import Store
from wisp.serve.store.offload import off_loop
from wisp.tools.base import Tool, ToolContext, ToolKind, ToolResult

if TYPE_CHECKING:
    from wisp.runtime.runtime import Runtime

NAME = "memory"
COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
WRITES = frozenset(COMMANDS) - {"view"}
_S: JSON = {"type": "string"}
SCHEMA: JSON = {"type": "object", "required": ["command"], "properties": {
    "command": {"type": "string", "enum": list(COMMANDS)},
    "path": {"type": "string", "description": "A path under a store's mount path."},
    "view_range": {"type": "array", "items": {"type": "integer"}},
    "file_text": _S, "old_str": _S, "new_str": _S,
    "insert_line": {"type": "integer"}, "insert_text": _S,
    "old_path": _S, "new_path": _S}}


def attachments(session: JSON) -> list[JSON]:
    return [r for r in session.get("resources") or [] if r.get("type") == "memory_store"]


def tools_for(store: Store, session_id: str, session: JSON | None) -> dict[str, Tool]:
    """{"memory": the tool} over the session's attached stores; {} when none are."""
    owner = store.owner_of("session", session_id)
    stores = attachments(session or {})
    if owner is None or not stores:
        return {}
    return {NAME: MemoryTool(store, owner, session_id, stores)}


def install(runtime: Runtime | None, tools: dict[str, Tool]) -> None:
    """The memory tool as the session's resources are now (one detached since the
    runtime opened is out of the agent's reach from the next turn on)."""
    if runtime is None:
        return
    runtime.offer_tools(tools, replacing=(NAME,))


def describe(stores: list[JSON]) -> str:
    """What the model is told: the tool, then each store (the API renders a store's
    description and an attachment's instructions into the agent's prompt)."""
    lines = ["Read and write your persistent memory stores. Each store is a folder of "
             "text files; paths start with the store's folder. Commands: view (a folder's "
             "files, or a file's lines), create (write a whole file), str_replace, insert "
             "(after insert_line; 0 is the top), delete, rename (within one store).",
             "Attached stores:"]
    for store in stores:
        line = f"- {store['mount_path']} ({store['name']}, {store['access']})"
        for extra in (store.get("description"), store.get("instructions")):
            line += f": {extra}" if extra else ""
        lines.append(line)
    return "\n".join(lines)


class MemoryTool(Tool):
    kind: ClassVar[ToolKind] = "execute"

    def __init__(self, store: Store, owner: str, session_id: str, stores: list[JSON]) -> None:
        self.name = NAME  # type: ignore[misc]
        self.description = describe(stores)  # type: ignore[misc]
        self.input_schema = SCHEMA  # type: ignore[misc]
        self.store = store
        self.memory = MemoryStores(store, owner)
        self.actor = session_actor(session_id)
        self.stores = stores

    def is_read_only(self, tool_input: JSON) -> bool:
        # Nothing of the host is touched (the store is the service's own), so wisp's
        # permission engine has nothing to judge; access is enforced in `run`.
        return True

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        try:
            # Off the event loop: each command is store calls (round trips on PostgreSQL).
            return ToolResult(await off_loop(self.store, self._run, tool_input))
        except (HttpError, ShapeError, ValueError, KeyError, TypeError) as exc:
            message = exc.message if isinstance(exc, HttpError) else str(exc)
            return ToolResult.error(message)

    def _run(self, tool_input: JSON) -> str:
        command = tool_input.get("command")
        if command not in COMMANDS:
            raise ValueError(f"command: expected one of {', '.join(COMMANDS)}")
        if command == "rename":
            return self._rename(tool_input)
        attached, path = self._where(str(tool_input["path"]), command in WRITES)
        store_id = str(attached["memory_store_id"])
        if command == "view":
            return self._view(store_id, attached["mount_path"], path, tool_input)
        if command == "delete":
            return self._delete(store_id, path)
        current = self.memory.at_path(store_id, path)
        if command == "create":
            text = memory_shapes.content(tool_input["file_text"], "file_text")
            self._write(store_id, path, current, text)
            return f"{tool_input['path']} written"
        if current is None:
            raise ValueError(f"{tool_input['path']}: no such memory")
        text = _edited(command, str(current["content"]), tool_input)
        self._edit(store_id, current, memory_shapes.content(text, "content"),
                   str(tool_input["path"]))
        return f"{tool_input['path']} edited"

    def _where(self, given: str, writing: bool) -> tuple[JSON, str]:
        """The attachment a path is under, and the memory path (or folder) it names."""
        for attached in self.stores:
            mount = attached["mount_path"]
            if given == mount or given.startswith(mount + "/"):
                if writing and attached["access"] == "read_only":
                    raise ValueError(f"{mount} is attached read_only")
                return attached, given[len(mount):] or "/"
        mounts = ", ".join(s["mount_path"] for s in self.stores)
        raise ValueError(f"{given} is not in a memory store (stores: {mounts})")

    def _view(self, store_id: str, mount: str, path: str, tool_input: JSON) -> str:
        found = self.memory.at_path(store_id, path)
        if found is not None:
            return _numbered(str(found["content"]), tool_input.get("view_range"))
        prefix = path if path.endswith("/") else path + "/"
        listed = [m for m in self.memory.memories(store_id) if m["path"].startswith(prefix)]
        if not listed and path != "/":
            raise ValueError(f"{mount}{path}: no such memory or folder")
        rows = [f"{m['content_size_bytes']:>8}  {mount}{m['path']}" for m in listed]
        return "\n".join([f"{mount}{path}: {len(listed)} files", *rows])

    def _write(self, store_id: str, path: str, current: JSON | None, text: str) -> None:
        memory_shapes.memory_path(path, "path")
        if current is None:
            self.memory.create(store_id, path, text, self.actor)
        else:
            self.memory.update(store_id, current["id"], {"content": text}, self.actor)

    def _edit(self, store_id: str, current: JSON, text: str, shown: str) -> None:
        """An edit of the content as read: refused when another writer (another session,
        the API) changed it since, rather than overwriting that change."""
        change: memory_shapes.MemoryChange = {"content": text,
                                              "precondition": current["content_sha256"]}
        try:
            self.memory.update(store_id, current["id"], change, self.actor)
        except HttpError as exc:
            if exc.status == 409 and exc.message.startswith("precondition"):
                raise ValueError(f"{shown}: changed by another writer since it was read; "
                                 "view it and edit again") from None
            raise

    def _delete(self, store_id: str, path: str) -> str:
        self.memory.writable(store_id)
        prefix = path.rstrip("/") + "/"
        gone = [m for m in self.memory.memories(store_id)
                if m["path"] == path or m["path"].startswith(prefix)]
        if not gone:
            raise ValueError(f"{path}: no such memory or folder")
        for memory in gone:
            self.memory.delete(store_id, memory["id"], None, self.actor)
        return f"deleted {len(gone)} memories"

    def _rename(self, tool_input: JSON) -> str:
        old, old_path = self._where(str(tool_input["old_path"]), True)
        new, new_path = self._where(str(tool_input["new_path"]), True)
        if old is not new:
            raise ValueError("rename: both paths must be in one memory store")
        store_id = str(old["memory_store_id"])
        current = self.memory.at_path(store_id, old_path)
        if current is None:
            raise ValueError(f"{tool_input['old_path']}: no such memory")
        path = memory_shapes.memory_path(new_path, "new_path")
        self.memory.update(store_id, current["id"], {"path": path}, self.actor)
        return f"renamed to {tool_input['new_path']}"


def _edited(command: str, text: str, tool_input: JSON) -> str:
    if command == "str_replace":
        old = str(tool_input["old_str"])
        count = text.count(old) if old else 0
        if count != 1:
            raise ValueError(f"old_str: found {count} times; it must be found exactly once")
        return text.replace(old, str(tool_input.get("new_str") or ""), 1)
    lines = text.splitlines(keepends=True)
    at = tool_input["insert_line"]
    if not isinstance(at, int) or not 0 <= at <= len(lines):
        raise ValueError(f"insert_line: expected 0 to {len(lines)}")
    insert = str(tool_input["insert_text"])
    if insert and not insert.endswith("\n"):
        insert += "\n"
    if at and lines and not lines[at - 1].endswith("\n"):
        lines[at - 1] += "\n"
    return "".join([*lines[:at], insert, *lines[at:]])


def _numbered(text: str, view_range: object) -> str:
    lines = text.splitlines()
    first, last = 1, len(lines)
    if isinstance(view_range, list) and len(view_range) == 2:
        first = max(1, int(view_range[0]))
        last = len(lines) if int(view_range[1]) <= 0 else min(len(lines), int(view_range[1]))
    return "\n".join(f"{n:>6}\t{lines[n - 1]}" for n in range(first, last + 1))
