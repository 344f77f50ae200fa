"""What the permission layer needs to know about a tool to judge one call of it.

`wisp.tools.base.Tool` satisfies this protocol, and so does any tool a front end brings
(an MCP tool, a served agent's custom tool); permissions never imports the tools package,
so the tools can use the shell analyser and rule parsing without a cycle.
"""

from __future__ import annotations

from typing import Literal, Protocol

from wisp.jsontypes import JSON

ToolKind = Literal["read", "edit", "execute", "network", "meta"]
# What permission rules with content judge for a tool: see `Tool.rule_subject`.
RuleSubject = Literal["paths", "command", "domain", "name"]


class JudgedTool(Protocol):
    """A tool as the permission layer sees it: what it is called, what kind of thing it
    does, and what one call touches."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> ToolKind: ...

    @property
    def rule_subject(self) -> RuleSubject: ...

    @property
    def searches_folders(self) -> bool: ...

    @property
    def asks_user(self) -> bool: ...

    @property
    def rule_name(self) -> str: ...

    def subject(self, tool_input: JSON) -> str: ...

    def is_read_only(self, tool_input: JSON) -> bool: ...

    def target_paths(self, tool_input: JSON) -> list[str]: ...

    def describe(self, tool_input: JSON) -> str: ...
