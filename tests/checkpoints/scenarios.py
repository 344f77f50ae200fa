"""File checkpoints and `rewind_files`, observed the same way on wisp and on the reference.

A duplex session (bypassPermissions, the SDKs' CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING
on or off) whose prompts carry their own uuids, as the SDKs' can: the first creates a
file with Write; the second edits it, creates another, edits a file that existed before
the session and writes one more through Bash; the third only talks. Then dry runs and
real rewinds to each message, unknown ids, and the backup folder. Paths are reduced to
file names and the backups' hashed names to `<file>@v<version>`.
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path
from typing import Any

from tests.refrun import Duplex, Place
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
ENV = "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"


def _script(work: Path) -> list[Any]:
    return [
        reply.tool_use("Write", {"file_path": str(work / "a.txt"), "content": "one\n"}),
        reply.text("wrote a"),
        reply.tool_use("Edit", {"file_path": str(work / "a.txt"), "old_string": "one",
                                "new_string": "two"}),
        reply.tool_use("Write", {"file_path": str(work / "b.txt"), "content": "new file\n"}),
        reply.tool_use("Edit", {"file_path": str(work / "pre.txt"),
                                "old_string": "pre-existing", "new_string": "changed"}),
        reply.tool_use("Bash", {"command": f"echo bash > {work}/c.txt"}),
        reply.text("edited"),
    ]


class Names:
    """Absolute paths (and the backups' hashed names) as file names."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.hashes = {hashlib.sha256(str(work / n).encode()).hexdigest()[:16]: n
                       for n in ("a.txt", "b.txt", "c.txt", "pre.txt")}

    def answer(self, response: JSON) -> JSON:
        """A control response, paths as names."""
        body = dict(response.get("response") or {})
        if "filesChanged" in body:
            body["filesChanged"] = [Path(p).name if Path(p).parent == self.work else p
                                    for p in body["filesChanged"]]
        if response["subtype"] == "error":
            return {"subtype": "error", "error": response["error"]}
        return {"subtype": response["subtype"], "response": body}

    def files(self) -> JSON:
        return {p.name: p.read_text() for p in sorted(self.work.glob("*.txt"))}

    def backups(self, config: Path) -> list[str]:
        found = []
        for path in config.glob("file-history/*/*"):
            digest, _, version = path.name.partition("@")
            found.append(f"{self.hashes.get(digest, digest)}@{version}={path.read_text()!r}")
        return sorted(found)


def rewind_scenario(which: str, tmp: Path, enabled: bool = True) -> JSON:
    seen: JSON = {}
    work = tmp / "work"
    work.mkdir(parents=True)
    (work / "pre.txt").write_text("pre-existing\n")
    names = Names(work)
    with ScriptedServer(*_script(work), default=reply.echo()) as server:
        place = Place(tmp, server, {"IS_SANDBOX": "1", **({ENV: "true"} if enabled else {})})
        cli = Duplex(which, place, "--permission-mode", "bypassPermissions",
                     "--replay-user-messages")

        def rewind(name: str, message: str, dry_run: bool | None = None) -> None:
            request: JSON = {"subtype": "rewind_files", "user_message_id": message}
            if dry_run is not None:
                request["dry_run"] = dry_run
            seen[name] = {"answer": names.answer(cli.control(request)), "files": names.files()}

        try:
            cli.control({"subtype": "initialize", "hooks": None})
            first, second, third = (str(uuid.uuid4()) for _ in range(3))
            rewind("before any message (dry run)", first, True)
            rewind("before any message", first)
            frames = cli.prompt("write a", uuid=first)
            replayed = [f for f in frames if f["type"] == "user" and f.get("isReplay")]
            seen["replay carries the prompt's uuid"] = [f["uuid"] == first for f in replayed]
            rewind("the latest message, at once (dry run)", first, True)
            cli.prompt("edit things", uuid=second)
            cli.prompt("just talk", uuid=third)
            seen["files after three turns"] = names.files()
            rewind("second message (dry run)", second, True)
            rewind("first message (dry run)", first, True)
            rewind("unknown id (dry run)", str(uuid.uuid4()), True)
            rewind("unknown id", str(uuid.uuid4()))
            rewind("unknown id, dry_run false", str(uuid.uuid4()), False)
            rewind("second message", second)
            rewind("second message again (dry run)", second, True)
            rewind("first message", first)
            cli.prompt("after rewind")
            rewind("third message, after rewinding (dry run)", third, True)
            seen["backups"] = names.backups(place.config)
        finally:
            seen["exit code"] = cli.close()
    return seen


def disabled_scenario(which: str, tmp: Path) -> JSON:
    """Checkpointing off: every answer is the same refusal."""
    seen: JSON = {}
    work = tmp / "work"
    work.mkdir(parents=True)
    names = Names(work)
    with ScriptedServer(*_script(work)[:2], default=reply.echo()) as server:
        place = Place(tmp, server, {"IS_SANDBOX": "1"})
        cli = Duplex(which, place, "--permission-mode", "bypassPermissions")
        try:
            first = str(uuid.uuid4())
            cli.prompt("write a", uuid=first)
            for name, dry_run in (("dry run", True), ("rewind", None)):
                request: JSON = {"subtype": "rewind_files", "user_message_id": first}
                if dry_run is not None:
                    request["dry_run"] = dry_run
                seen[name] = names.answer(cli.control(request))
            seen["files"] = names.files()
            seen["backups"] = names.backups(place.config)
        finally:
            seen["exit code"] = cli.close()
    return seen
