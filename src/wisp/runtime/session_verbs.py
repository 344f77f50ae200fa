"""The verbs that change a session's state between turns on a front end's word: its
permission rules and working folders, the child processes it must end, the files it has
read, where it works, how far back its conversation goes. A base class of `Runtime`
beside `verbs.py`; front ends call these instead of editing the engine's session
(`tests/architecture/test_runtime_seal.py` holds them to it), so each change has one
place that makes it and says why.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from wisp.engine.context import RunContext
    from wisp.mcp.hub import McpHub
    from wisp.permissions.engine import PermissionPolicy
    from wisp.permissions.modes import PermissionMode
    from wisp.rules import Rule

RuleKind = Literal["allow", "deny", "ask"]
RULE_KINDS: tuple[RuleKind, ...] = ("allow", "deny", "ask")


def _rules(policy: PermissionPolicy, kind: RuleKind) -> list[Rule]:
    return {"allow": policy.allow, "deny": policy.deny, "ask": policy.ask}[kind]


class SessionStateVerbs:
    ctx: RunContext
    env: dict[str, str]
    _mcp: McpHub | None  # the Runtime's MCP servers, once it has any

    @property
    def permission_mode(self) -> PermissionMode:
        """The mode the session's tool calls are judged in now (`set_permission_mode`
        changes it)."""
        return self.ctx.session.permission_mode

    # Permission rules ----------------------------------------------------------------

    def add_rule(self, kind: RuleKind, rule: Rule) -> None:
        """`rule` applies from the next tool call on, for the rest of this session: one the
        user just saved to settings (ranked as settings rank it, as the next session will
        load it), a client's "always" for this session only."""
        _rules(self.ctx.session.policy, kind).append(rule)

    def remove_rule(self, rule: Rule, kinds: Iterable[RuleKind] = RULE_KINDS) -> None:
        """`rule` no longer applies to this session, under each of `kinds` it was listed
        under (the user took it out of settings, a host lifted an override)."""
        policy = self.ctx.session.policy
        for kind in kinds:
            listed = _rules(policy, kind)
            listed[:] = [r for r in listed if r != rule]

    def replace_ranked_rules(self, kind: RuleKind, rank: int, rules: Iterable[Rule]) -> None:
        """A host's own rules of one rank, kept apart from the user's by that rank, are
        `rules` from now on (`wisp serve` holds mounted files and skill folders read-only
        with deny rules it renews at each mount); rules of other ranks stay."""
        listed = _rules(self.ctx.session.policy, kind)
        listed[:] = [*(r for r in listed if r.rank != rank), *rules]

    def apply_permission_updates(self, updates: Any, *, may_bypass: bool = False) -> None:
        """A host's `updatedPermissions` (its answer to a permission prompt) applied to
        this session: rules, the mode, working folders."""
        from wisp.permissions.updates import apply_permission_updates

        apply_permission_updates(self.ctx.session.policy, updates, may_bypass=may_bypass)

    # Where the session works ---------------------------------------------------------

    async def add_working_dir(self, folder: Path) -> bool:
        """Tools may read and write in `folder` as in the cwd, for the rest of the session,
        and the connected MCP servers, which may list the session's roots, are told
        (`notifications/roots/list_changed`): every front end adds a folder here, so none
        forgets to tell them. False when it already was a working folder."""
        extra = self.ctx.session.policy.extra_dirs
        if folder in [d.resolve() for d in extra]:
            return False
        extra.append(folder)
        if self._mcp is not None:  # no hub yet: no server connected, none to tell
            await self._mcp.roots_changed()
        return True

    def move_to(self, target: Path) -> bool:
        """The session (tools, permission rules) works in `target` from now on; its
        transcript moves to that folder's project, where `--resume` from there looks.
        True when a transcript moved."""
        import shutil  # here: it imports bz2 and lzma, ~2 ms a `-p` run would pay for nothing

        from wisp.paths import transcript_file
        from wisp.sessions.transcript import TranscriptWriter

        session = self.ctx.session
        session.cwd = target
        session.policy.cwd = target
        recorder = session.recorder
        if not isinstance(recorder, TranscriptWriter) or not recorder.path.exists():
            return False
        moved = transcript_file(self.env, target, session.session_id)
        moved.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.move(recorder.path, moved)
        recorder.path = moved
        session.transcript_path = str(moved)
        return True

    # What the session ran and read ---------------------------------------------------

    def track_process(self, pgid: int) -> None:
        """A process group the front end started for the user (the terminal UI's `!`
        commands) is ended with the session's own on interrupt and close."""
        self.ctx.session.processes.add(pgid)

    def untrack_process(self, pgid: int) -> None:
        """The process group ended on its own: nothing left to kill."""
        self.ctx.session.processes.discard(pgid)

    def treat_as_read(self, path: Path, mtime: float) -> None:
        """Edit's read-before-write check treats `path` as read at `mtime` (a host's editor
        showed it to the model); a file changed since still needs a fresh Read."""
        files: dict[str, float] = self.ctx.session.tool_state.setdefault("read_files", {})
        files[str(path)] = mtime

    def rewind_conversation(self, history_len: int, parent_uuid: str | None) -> None:
        """Back to the conversation as it was with `history_len` messages, the last of them
        the transcript line `parent_uuid` (the terminal UI's /rewind): what comes next
        follows it there."""
        self.ctx.session.rewind_to(history_len, parent_uuid)
