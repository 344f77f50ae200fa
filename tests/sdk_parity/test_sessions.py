"""Sessions: resume, continue_conversation, fork_session, and the session helpers."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from tests.sdk_parity import summary as s
from tests.sdk_parity.harness import Backend, scenario
from wisp.testing import reply


def session_of(messages: list[Any]) -> str:
    [result] = s.results(messages)
    return str(result.session_id)


def history(b: Backend) -> list[Any]:
    """The conversation the last request carried, as role: text pairs."""
    out = []
    for m in s.model_requests(b)[-1]["messages"]:
        content = m["content"]
        text = content if isinstance(content, str) else " ".join(
            x.get("text", "") for x in content if x.get("type") == "text")
        out.append(f"{m['role']}: {text}")
    return out


@scenario()
async def resume_continue_fork(b: Backend) -> dict[str, Any]:
    b.server.script(reply.text("noted"), reply.text("it was 42"), reply.text("still 42"),
                    reply.text("forked 42"))
    first, raised = await b.query("remember 42")
    assert raised is None, raised
    original = session_of(first)

    resumed, raised_resume = await b.query("what was it?", resume=original)
    after_resume = history(b)
    continued, raised_continue = await b.query("and now?", continue_conversation=True)
    after_continue = history(b)
    forked, raised_fork = await b.query("fork it", resume=original, fork_session=True)
    after_fork = history(b)
    return {
        "raised": [raised_resume, raised_continue, raised_fork],
        "texts": [s.texts(m) for m in (first, resumed, continued, forked)],
        "resume_history": after_resume,
        "resume_keeps_session": session_of(resumed) == original,
        "continue_history": after_continue,
        "continue_keeps_session": session_of(continued) == original,
        "fork_history": after_fork,
        "fork_gets_new_session": session_of(forked) != original,
        "init_session_matches_result": [
            s.init_data(m, b, "session_id")["session_id"] == "<uuid>"
            and m[0].data["session_id"] == session_of(m)
            for m in (first, resumed, continued, forked)],
    }


def test_resume_continue_fork(backend: Backend) -> None:
    assert backend.run(resume_continue_fork) == {
        "raised": [None, None, None],
        "texts": [["noted"], ["it was 42"], ["still 42"], ["forked 42"]],
        "resume_history": ["user: remember 42", "assistant: noted", "user: what was it?"],
        "resume_keeps_session": True,
        "continue_history": ["user: remember 42", "assistant: noted", "user: what was it?",
                             "assistant: it was 42", "user: and now?"],
        "continue_keeps_session": True,
        # resume and continue appended to the original session, so the fork of it sees
        # every turn so far.
        "fork_history": ["user: remember 42", "assistant: noted", "user: what was it?",
                         "assistant: it was 42", "user: and now?", "assistant: still 42",
                         "user: fork it"],
        "fork_gets_new_session": True,
        "init_session_matches_result": [True, True, True, True],
    }


@scenario()
async def resume_unknown_session(b: Backend) -> dict[str, Any]:
    missing = "00000000-0000-4000-8000-000000000000"
    messages, raised = await b.query("hello?", resume=missing)
    return {
        "kinds": s.kinds(messages),
        "raised": raised,
        "requests": len(s.model_requests(b)),
        "stderr": [line for line in b.stderr_lines if "No conversation found" in line],
    }


def test_resume_unknown_session(backend: Backend) -> None:
    # An error result comes before the exit, as from the reference, so the SDK raises it
    # (ResultError, a ProcessError) with the message rather than a bare process failure.
    assert backend.run(resume_unknown_session) == {
        "kinds": [],
        "raised": "ResultError",
        "requests": 0,
        "stderr": ["No conversation found with session ID: "
                   "00000000-0000-4000-8000-000000000000"],
    }


@contextlib.contextmanager
def config_dir(path: str) -> Iterator[None]:
    """The session helpers read CLAUDE_CONFIG_DIR from this process's environment."""
    old = os.environ.get("CLAUDE_CONFIG_DIR")
    os.environ["CLAUDE_CONFIG_DIR"] = path
    try:
        yield
    finally:
        if old is None:
            del os.environ["CLAUDE_CONFIG_DIR"]
        else:
            os.environ["CLAUDE_CONFIG_DIR"] = old


@scenario()
async def session_helpers(b: Backend) -> dict[str, Any]:
    config = str(b.home / ".claude")
    env = {"CLAUDE_CONFIG_DIR": config}
    b.server.script(reply.text("first answer"), reply.text("second answer"))
    first, _ = await b.query("first prompt", extra_env=env)
    second, _ = await b.query("second prompt", extra_env=env)
    ids = [session_of(first), session_of(second)]
    with config_dir(config):
        listed = b.sdk.list_sessions(directory=str(b.cwd))
        info = b.sdk.get_session_info(ids[0], directory=str(b.cwd))
        chain = b.sdk.get_session_messages(ids[0], directory=str(b.cwd))
    return {
        "listed": sorted(ids.index(x.session_id) for x in listed),
        "first_prompts": sorted(x.first_prompt for x in listed),
        "info": {"found": info is not None and info.session_id == ids[0],
                 "first_prompt": getattr(info, "first_prompt", None)},
        "messages": [(m.type, s.scrub(m.message.get("content"), b)) for m in chain],
    }


def test_session_helpers(backend: Backend) -> None:
    assert backend.run(session_helpers) == {
        "listed": [0, 1],
        "first_prompts": ["first prompt", "second prompt"],
        "info": {"found": True, "first_prompt": "first prompt"},
        "messages": [("user", "first prompt"),
                     ("assistant", [{"type": "text", "text": "first answer"}])],
    }


@scenario()
async def chosen_session_id(b: Backend) -> dict[str, Any]:
    chosen = "12345678-1234-4234-8234-123456789abc"
    b.server.script(reply.text("first"), reply.text("second"))
    first, raised = await b.query("hello", session_id=chosen)
    second, raised_second = await b.query("again", resume=chosen)
    return {
        "raised": [raised, raised_second],
        "sessions": [session_of(first) == chosen, session_of(second) == chosen],
        "history": history(b),
    }


def test_chosen_session_id(backend: Backend) -> None:
    assert backend.run(chosen_session_id) == {
        "raised": [None, None],
        "sessions": [True, True],
        "history": ["user: hello", "assistant: first", "user: again"],
    }
