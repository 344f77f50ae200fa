"""`can_use_tool`: what the callback is asked, and what its answers do."""

from __future__ import annotations

from typing import Any

from tests.sdk_parity import summary as s
from tests.sdk_parity.harness import Backend, scenario
from wisp.testing import reply


async def one_prompt(text: str) -> Any:
    """can_use_tool needs a streamed prompt (the official SDK refuses a string)."""
    yield {"type": "user", "message": {"role": "user", "content": text},
           "parent_tool_use_id": None, "session_id": ""}


class Asked:
    """A can_use_tool callback that records each question and answers from a list."""

    def __init__(self, b: Backend, *answers: Any) -> None:
        self.b = b
        self.answers = list(answers)
        self.questions: list[dict[str, Any]] = []

    async def __call__(self, name: str, tool_input: dict[str, Any], context: Any) -> Any:
        self.questions.append({
            "tool_name": name,
            "input": s.scrub(tool_input, self.b),
            "context": type(context).__name__,
            "tool_use_id": s.scrub(context.tool_use_id, self.b),
            "blocked_path": s.scrub(context.blocked_path, self.b),
            "suggestions": [s.scrub(x.to_dict(), self.b) for x in context.suggestions],
        })
        return self.answers.pop(0)


@scenario()
async def allow_with_updated_input(b: Backend) -> dict[str, Any]:
    target = b.cwd / "perm.txt"
    b.server.script(reply.tool_use("Write", {"file_path": str(target), "content": "model\n"}),
                    reply.text("done"))
    asked = Asked(b, b.sdk.PermissionResultAllow(
        updated_input={"file_path": str(target), "content": "FROM HOST\n"}))
    messages, raised = await b.query(one_prompt("write"), can_use_tool=asked)
    return {
        "raised": raised,
        "questions": asked.questions,
        "file": target.read_text(),
        "conversation": s.conversation(messages, b),
        "result": s.the_result(messages, b),
    }


@scenario()
async def deny_with_message(b: Backend) -> dict[str, Any]:
    target = b.cwd / "denied.txt"
    b.server.script(reply.tool_use("Write", {"file_path": str(target), "content": "no\n"}),
                    reply.text("understood"))
    asked = Asked(b, b.sdk.PermissionResultDeny(message="the host says no"))
    messages, raised = await b.query(one_prompt("write"), can_use_tool=asked)
    return {
        "raised": raised,
        "questions": [q["tool_name"] for q in asked.questions],
        "exists": target.exists(),
        "kinds": s.kinds(messages),
        "result": s.the_result(messages, b),
        "tool_results_sent": s.tool_results_sent(b),
    }


@scenario()
async def deny_and_interrupt(b: Backend) -> dict[str, Any]:
    marker = b.cwd / "never"
    b.server.script(reply.tool_use("Bash", {"command": f"touch {marker}"}),
                    reply.text("unused"))
    asked = Asked(b, b.sdk.PermissionResultDeny(message="stop right there", interrupt=True))
    messages, raised = await b.query(one_prompt("run"), can_use_tool=asked)
    return {
        "raised": raised,
        "questions": [q["tool_name"] for q in asked.questions],
        "kinds": s.kinds(messages),
        "conversation": s.conversation(messages, b),
        "result": {k: v for k, v in s.the_result(messages, b).items()
                   if k in ("subtype", "is_error", "permission_denials")},
        "requests": len(s.model_requests(b)),
        "marker_exists": marker.exists(),
    }


@scenario()
async def allow_with_updated_permissions(b: Backend) -> dict[str, Any]:
    """The first answer adds a session rule allowing Bash: the second call is not asked."""
    # touch is not read-only: each call would be asked about.
    b.server.script(reply.tool_use("Bash", {"command": "touch one && echo one"}),
                    reply.tool_use("Bash", {"command": "touch two && echo two"}),
                    reply.text("both ran"))
    rule = b.sdk.PermissionUpdate(
        type="addRules", rules=[b.types.PermissionRuleValue(tool_name="Bash")],
        behavior="allow", destination="session")
    asked = Asked(b, b.sdk.PermissionResultAllow(updated_permissions=[rule]))
    messages, raised = await b.query(one_prompt("run twice"), can_use_tool=asked)
    return {
        "raised": raised,
        "questions": asked.questions,
        "tool_results_sent": s.tool_results_sent(b),
        "files": sorted(p.name for p in b.cwd.iterdir()),
        "result": s.the_result(messages, b),
    }


@scenario()
async def can_use_tool_with_string_prompt(b: Backend) -> dict[str, Any]:
    """A string prompt works with can_use_tool too (the official SDK used to refuse it)."""
    target = b.cwd / "from-string.txt"
    b.server.script(reply.tool_use("Write", {"file_path": str(target), "content": "x"}),
                    reply.text("done"))
    asked = Asked(b, b.sdk.PermissionResultAllow())
    messages, raised = await b.query("a string prompt", can_use_tool=asked)
    return {"raised": raised, "questions": [q["tool_name"] for q in asked.questions],
            "written": target.exists(), "kinds": s.kinds(messages)}


def success(result: str, num_turns: int = 2, **extra: Any) -> dict[str, Any]:
    return {"subtype": "success", "is_error": False, "num_turns": num_turns, "result": result,
            "structured_output": None, "stop_reason": "end_turn", "permission_denials": [],
            "errors": [], **extra}


def test_allow_with_updated_input(backend: Backend) -> None:
    model_input = {"file_path": "<cwd>/perm.txt", "content": "model\n"}
    assert backend.run(allow_with_updated_input) == {
        "raised": None,
        "questions": [{"tool_name": "Write", "input": model_input,
                       "context": "ToolPermissionContext", "tool_use_id": "<toolu>",
                       "blocked_path": "<cwd>/perm.txt",
                       "suggestions": [{"type": "setMode", "destination": "session",
                                        "mode": "acceptEdits"}]}],
        "file": "FROM HOST\n",  # the host's input was used
        # The transcript keeps the model's input (what it asked for).
        "conversation": [["assistant", [["tool_use", "Write", model_input]]],
                         ["user", [["tool_result",
                                    "File created successfully at: <cwd>/perm.txt", False]]],
                         ["assistant", [["text", "done"]]]],
        "result": success("done"),
    }


def test_deny_with_message(backend: Backend) -> None:
    assert backend.run(deny_with_message) == {
        "raised": None,
        "questions": ["Write"],
        "exists": False,
        "kinds": ["SystemMessage:init", "AssistantMessage", "SystemMessage:permission_denied",
                  "UserMessage", "AssistantMessage", "ResultMessage"],
        "result": success("understood", permission_denials=[
            {"tool_name": "Write",
             "tool_input": {"file_path": "<cwd>/denied.txt", "content": "no\n"}}]),
        "tool_results_sent": [{"content": "the host says no", "is_error": True}],
    }


def test_deny_and_interrupt(backend: Backend) -> None:
    # interrupt=True ends the turn: no second request, an error result, so the SDK
    # raises ResultError after yielding it.
    command = {"command": "touch <cwd>/never"}
    assert backend.run(deny_and_interrupt) == {
        "raised": "ResultError",
        "questions": ["Bash"],
        "kinds": ["SystemMessage:init", "AssistantMessage", "SystemMessage:permission_denied",
                  "UserMessage", "UserMessage", "ResultMessage"],
        "conversation": [["assistant", [["tool_use", "Bash", command]]],
                         ["user", [["tool_result", "stop right there", True]]],
                         ["user", [["text", "[Request interrupted by user for tool use]"]]]],
        "result": {"subtype": "error_during_execution", "is_error": True,
                   "permission_denials": [{"tool_name": "Bash", "tool_input": command}]},
        "requests": 1,
        "marker_exists": False,
    }


def test_allow_with_updated_permissions(backend: Backend) -> None:
    assert backend.run(allow_with_updated_permissions) == {
        "raised": None,
        "questions": [{"tool_name": "Bash", "input": {"command": "touch one && echo one"},
                       "context": "ToolPermissionContext", "tool_use_id": "<toolu>",
                       "blocked_path": None,
                       "suggestions": [{"type": "addRules", "destination": "session",
                                        "rules": [{"toolName": "Bash"}],
                                        "behavior": "allow"}]}],  # asked once only
        "tool_results_sent": [{"content": "one", "is_error": False},
                              {"content": "two", "is_error": False}],
        "files": ["one", "two"],
        "result": success("both ran", 3),
    }


def test_can_use_tool_with_string_prompt(backend: Backend) -> None:
    assert backend.run(can_use_tool_with_string_prompt) == {
        "raised": None,
        "questions": ["Write"],
        "written": True,
        "kinds": ["SystemMessage:init", "AssistantMessage", "UserMessage", "AssistantMessage",
                  "ResultMessage"],
    }
