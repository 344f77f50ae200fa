"""Run any example without an API key: a scripted model plays Claude's part.

Shows: `wisp.testing.ScriptedServer` is a real Messages API server on 127.0.0.1 that
answers from a script (text, tool calls, or a function of the request), the one wisp's
own tests use. Here it gets, for each example, the replies a model would give to that
example's prompt, so the example runs for real: its tools, hooks and permission
callbacks run, files are written or protected, and only the model is scripted. Your
agent's tests can script a model the same way.

Run it:

    python examples/offline.py                 # lists the examples it can run
    python examples/offline.py many_sessions   # runs examples/many_sessions.py offline
    python examples/offline.py hook            # ... or any other, by name

The example runs in a fresh temporary folder, with ANTHROPIC_BASE_URL pointing at the
scripted server and a dummy ANTHROPIC_API_KEY; its output is printed as it comes and its
exit code is this program's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wisp.testing import ScriptedServer, reply
from wisp.testing.reply import Reply

EXAMPLES = Path(__file__).resolve().parent
JSON = dict[str, Any]


@dataclass
class Script:
    """What the model answers for one example, and the arguments the example gets."""

    replies: list[Reply] = field(default_factory=list)
    default: Reply | None = None  # answers every request once `replies` run out
    args: list[str] = field(default_factory=list)


def one_shot(work: Path) -> Script:
    return Script([reply.text("Paris: it is famous for the Eiffel Tower and the Louvre.")])


def multi_turn(work: Path) -> Script:
    return Script([reply.text("Lisbon"), reply.text("Lisbon is the capital of Portugal."),
                   reply.text("The Belém Tower, on the bank of the Tagus.")])


def custom_tool(work: Path) -> Script:
    return Script([reply.tool_use("mcp__calc__add", {"a": 12.5, "b": 7.5}),
                   reply.tool_use("mcp__calc__multiply", {"a": 20, "b": 3}),
                   reply.text("(12.5 + 7.5) * 3 = 60.")])


def permission_callback(work: Path) -> Script:
    folder = work / "box"
    line = "The release moves to Friday; Ana owns the changelog."
    return Script([
        reply.tool_use("Read", {"file_path": str(folder / "notes.txt")}),
        reply.tool_use("Write", {"file_path": str(folder / "summary.txt"), "content": line}),
        reply.tool_use("Write", {"file_path": str(work / "outside-summary.txt"),
                                 "content": line}),
        reply.text("I saved the summary in the folder; the copy outside it was refused."),
    ], args=[str(folder)])


def hook(work: Path) -> Script:
    folder = work / "scratch"
    return Script([
        reply.tool_use("Bash", {"command": "echo hello > hello.txt"}),
        reply.tool_use("Bash", {"command": "rm -rf ./*"}),
        reply.tool_use("Bash", {"command": "ls"}),
        reply.text("hello.txt was created; the clean-up was blocked by a hook."),
    ], args=[str(folder)])


def many_sessions(work: Path) -> Script:
    # The sessions run at once, so the replies cannot be a queue in a fixed order: each
    # request is answered from what it carries. A prompt gets the Bash call it asks for;
    # a tool result gets its output repeated, as the prompt asks.
    def answer(body: JSON) -> Reply:
        last = body["messages"][-1]["content"]
        results = [b for b in last if isinstance(b, dict) and b.get("type") == "tool_result"]
        if results:
            return reply.text(_text_of(results[0].get("content")))
        command = reply.last_user_text(body).split("Bash tool: ", 1)[1]
        return reply.tool_use("Bash", {"command": command})

    return Script(default=reply.dynamic(answer), args=["5", str(work / "runs")])


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content)
    return str(content or "")


SCRIPTS: dict[str, Callable[[Path], Script]] = {
    "one_shot": one_shot, "multi_turn": multi_turn, "custom_tool": custom_tool,
    "permission_callback": permission_callback, "hook": hook,
    "many_sessions": many_sessions,
}


def run(name: str, work: Path) -> int:
    script = SCRIPTS[name](work)
    with ScriptedServer(*script.replies, default=script.default) as server:
        env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "offline"}
        # Its own process group, so an interrupt here ends the example and its tools too.
        child = subprocess.Popen([sys.executable, str(EXAMPLES / f"{name}.py"), *script.args],
                                 cwd=work, env=env, start_new_session=True)
        try:
            return child.wait()
        finally:
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGTERM)
                child.wait()


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: python examples/offline.py EXAMPLE\nexamples: " + ", ".join(SCRIPTS))
        return 0
    name = sys.argv[1].removesuffix(".py")
    if name not in SCRIPTS:
        print(f"no offline script for {name!r}; examples: {', '.join(SCRIPTS)}",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix=f"wisp-{name}-") as work:
        return run(name, Path(work))


if __name__ == "__main__":
    raise SystemExit(main())
