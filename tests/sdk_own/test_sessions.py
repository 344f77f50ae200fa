"""wisp.sdk's session helpers read wisp's transcript store, and answer as the official SDK's
helpers do when both look at the same files.

Transcripts come from the real `wisp` CLI run against the scripted Messages API, and, for
shapes wisp never writes (Claude Code's parallel tool turns, titles, tags, sidechains...),
from hand-built files in Claude Code's line format.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Runner, wisp_command
from tests.shared_fixtures import shared_path
from wisp import paths
from wisp.sdk import sessions as ours
from wisp.testing import reply

official = pytest.importorskip("claude_agent_sdk")

JSON = dict[str, Any]


@pytest.fixture
def store(wisp: Runner, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The config dir the `wisp` runner writes to, named for both SDKs in this process."""
    root = wisp.home / ".wisp"
    monkeypatch.setenv("HOME", str(wisp.home))
    monkeypatch.setenv("WISP_CONFIG_DIR", str(root))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))
    return root


def run(wisp: Runner, *args: str, cwd: Path | None = None) -> str:
    """Runs `wisp -p ... --output-format json` and returns the session id."""
    proc = subprocess.run(
        [*wisp_command(), "-p", *args, "--output-format", "json", "--allowedTools", "Bash"],
        cwd=cwd or wisp.cwd, env=wisp.env, capture_output=True, text=True, timeout=60,
        check=False, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    return str(json.loads(proc.stdout)["session_id"])


def transcript(cwd: Path, session_id: str) -> Path:
    return paths.transcript_file(os.environ, cwd, session_id)


def lines(path: Path) -> list[JSON]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def dicts(found: Any) -> Any:
    if found is None:
        return None
    return [asdict(x) for x in found] if isinstance(found, list) else asdict(found)


def assert_agree(directories: list[str | None], session_ids: list[str]) -> None:
    """Every helper answers the same from both SDKs."""
    for directory in directories:
        for limit, offset in [(None, 0), (1, 0), (2, 1), (None, 2), (0, 0)]:
            assert dicts(ours.list_sessions(directory, limit, offset)) == dicts(
                official.list_sessions(directory, limit, offset)), (directory, limit, offset)
        for sid in session_ids:
            assert dicts(ours.get_session_info(sid, directory)) == dicts(
                official.get_session_info(sid, directory)), (sid, directory)
            for limit, offset in [(None, 0), (2, 1), (None, 3), (1, 0)]:
                assert dicts(ours.get_session_messages(sid, directory, limit, offset)) == dicts(
                    official.get_session_messages(sid, directory, limit, offset)
                ), (sid, directory, limit, offset)


# Sessions the wisp CLI wrote ------------------------------------------------------------------


def test_lists_wisp_sessions_newest_first(wisp, server, store, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    server.script(reply.text("one"), reply.text("two"), reply.text("three"))
    first = run(wisp, "first prompt")
    second = run(wisp, "second\nprompt")
    third = run(wisp, "third prompt", cwd=elsewhere)

    here = ours.list_sessions(str(wisp.cwd))
    assert [s.session_id for s in here] == [second, first]
    assert [s.session_id for s in ours.list_sessions()] == [third, second, first]
    assert [s.session_id for s in ours.list_sessions(limit=1)] == [third]
    assert [s.session_id for s in ours.list_sessions(offset=1)] == [second, first]
    assert [s.session_id for s in ours.list_sessions(limit=1, offset=1)] == [second]
    assert [s.session_id for s in ours.list_sessions(str(elsewhere))] == [third]

    info = here[1]
    path = transcript(wisp.cwd, first)
    stat = path.stat()
    head = lines(path)[0]
    assert info.summary == info.first_prompt == "first prompt"
    assert here[0].first_prompt == "second prompt"  # on one line
    assert info.cwd == str(wisp.cwd)
    assert info.file_size == stat.st_size
    assert info.last_modified == int(stat.st_mtime * 1000)
    assert info.created_at is not None and info.created_at <= info.last_modified
    assert info.created_at == int(datetime.fromisoformat(head["timestamp"]).timestamp() * 1000)
    # Outside a git repository Claude Code records the branch as "HEAD"; so does wisp.
    assert (info.custom_title, info.tag, info.git_branch) == (None, None, "HEAD")

    assert ours.get_session_info(first) == info
    assert ours.get_session_info(first, str(wisp.cwd)) == info
    assert ours.get_session_info(first, str(elsewhere)) is None
    assert_agree([None, str(wisp.cwd), str(elsewhere)], [first, second, third])


def test_messages_are_the_conversation(wisp, server, store):
    server.script(reply.tool_use("Bash", {"command": "echo hi"}), reply.text("all done"))
    sid = run(wisp, "run echo")
    written = [e for e in lines(transcript(wisp.cwd, sid)) if "uuid" in e]  # not last-prompt

    found = ours.get_session_messages(sid, str(wisp.cwd))
    assert [m.type for m in found] == ["user", "assistant", "user", "assistant"]
    assert [m.uuid for m in found] == [e["uuid"] for e in written]
    assert [m.message for m in found] == [e["message"] for e in written]
    assert {m.session_id for m in found} == {sid}
    assert {(m.parent_tool_use_id, m.parent_agent_id) for m in found} == {(None, None)}
    assert found[0].message["content"] == "run echo"
    assert found[2].message["content"][0]["type"] == "tool_result"
    assert found[-1].message["content"] == [{"type": "text", "text": "all done"}]
    assert ours.get_session_messages(sid) == found
    assert ours.get_session_messages(sid, limit=2) == found[:2]
    assert ours.get_session_messages(sid, limit=2, offset=1) == found[1:3]
    assert ours.get_session_messages(sid, offset=3) == found[3:]
    assert_agree([None, str(wisp.cwd)], [sid])


def test_resumed_and_forked_sessions(wisp, server, store):
    server.script(reply.text("first answer"), reply.text("second answer"),
                  reply.text("fork answer"))
    sid = run(wisp, "start here")
    assert run(wisp, "go on", "--resume", sid) == sid
    fork = run(wisp, "branch off", "--resume", sid, "--fork-session")
    assert fork != sid

    listed = ours.list_sessions(str(wisp.cwd))
    assert [s.session_id for s in listed] == [fork, sid]
    assert all(s.first_prompt == "start here" for s in listed)

    resumed = ours.get_session_messages(sid)
    assert [m.message["content"] for m in resumed if m.type == "user"] == ["start here", "go on"]
    forked = ours.get_session_messages(fork)
    assert [m.message for m in forked[:4]] == [m.message for m in resumed]
    assert forked[-1].message["content"] == [{"type": "text", "text": "fork answer"}]
    assert {m.session_id for m in forked} == {fork}
    assert_agree([None, str(wisp.cwd)], [sid, fork])


def test_long_directory_names(wisp, server, store, tmp_path):
    deep = tmp_path
    for part in ("a" * 60, "b" * 60, "c" * 60, "d" * 60):
        deep = deep / part
    deep.mkdir(parents=True)
    assert len(paths.project_key(deep)) > paths.MAX_SANITIZED_LENGTH
    server.script(reply.text("ok"))
    sid = run(wisp, "deep down", cwd=deep)
    assert [s.session_id for s in ours.list_sessions(str(deep))] == [sid]
    assert ours.get_session_messages(sid, str(deep))[0].message["content"] == "deep down"
    assert_agree([None, str(deep)], [sid])


def test_config_dir_is_wisps(wisp, server, monkeypatch):
    server.script(reply.text("ok"), reply.text("ok"))
    sid = run(wisp, "where is it")  # the runner sets WISP_CONFIG_DIR=<home>/.wisp
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("WISP_CONFIG_DIR", str(wisp.home / ".wisp"))
    monkeypatch.setenv("HOME", str(wisp.home / "nowhere"))
    assert [s.session_id for s in ours.list_sessions()] == [sid]
    monkeypatch.delenv("WISP_CONFIG_DIR")
    monkeypatch.setenv("HOME", str(wisp.home))  # the default: ~/.claude, as Claude Code's
    assert ours.list_sessions(str(wisp.cwd)) == []
    wisp.env.pop("WISP_CONFIG_DIR")
    default = run(wisp, "and now")
    assert [s.session_id for s in ours.list_sessions(str(wisp.cwd))] == [default]
    assert [s.session_id for s in official.list_sessions(str(wisp.cwd))] == [default]
    monkeypatch.setenv("WISP_CONFIG_DIR", str(wisp.home / ".wisp"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(wisp.home / ".claude"))  # it wins, as in wisp
    assert [s.session_id for s in ours.list_sessions()] == [default]


def test_not_found(wisp, server, store, tmp_path):
    server.script(reply.text("ok"))
    sid = run(wisp, "hello")
    missing = "00000000-0000-4000-8000-000000000000"
    assert ours.get_session_info(missing) is None
    assert ours.get_session_info("not-a-uuid") is None
    assert ours.get_session_messages(missing) == []
    assert ours.get_session_messages("not-a-uuid") == []
    assert ours.get_session_messages(sid, str(tmp_path / "nope")) == []
    assert ours.list_sessions(str(tmp_path / "nope")) == []
    assert ours.get_session_info(sid.upper()) is None  # files are named in lower case
    assert_agree([str(tmp_path / "nope")], [missing, "not-a-uuid"])


# Renaming, tagging, deleting ------------------------------------------------------------------


def test_rename_tag_and_delete(wisp, server, store):
    server.script(reply.text("first"), reply.text("second"), reply.text("again"))
    sid = run(wisp, "name me")
    other = run(wisp, "leave me")
    cwd = str(wisp.cwd)

    ours.rename_session(sid, "  My title  ")
    ours.tag_session(sid, "expe\u200briment", directory=cwd)
    info = ours.get_session_info(sid)
    assert info is not None
    assert (info.summary, info.custom_title, info.first_prompt) == ("My title", "My title",
                                                                    "name me")
    assert info.tag == "experiment"
    assert_agree([None, cwd], [sid, other])

    ours.tag_session(sid, None)
    assert ours.get_session_info(sid, cwd).tag is None  # type: ignore[union-attr]
    official.rename_session(sid, "Their title", directory=cwd)
    official.tag_session(sid, "theirs")
    info = ours.get_session_info(sid, cwd)
    assert info is not None and (info.custom_title, info.tag) == ("Their title", "theirs")
    assert_agree([None, cwd], [sid, other])

    # wisp still resumes the session, with its history intact.
    assert run(wisp, "still there?", "--resume", sid) == sid
    sent = server.requests[-1].body["messages"]
    assert "name me" in json.dumps(sent[0]) and "still there?" in json.dumps(sent[-1])
    assert [m.type for m in ours.get_session_messages(sid)] == ["user", "assistant"] * 2

    ours.delete_session(sid, cwd)
    assert not transcript(wisp.cwd, sid).exists()
    assert [s.session_id for s in ours.list_sessions(cwd)] == [other]
    with pytest.raises(FileNotFoundError):
        ours.delete_session(sid)
    with pytest.raises(FileNotFoundError):
        ours.rename_session(sid, "gone")
    with pytest.raises(FileNotFoundError):
        ours.tag_session(sid, "gone", directory=cwd)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: ours.rename_session("bad", "t"), ValueError),
        (lambda: ours.rename_session("00000000-0000-4000-8000-000000000000", "  "), ValueError),
        (lambda: ours.tag_session("bad", "t"), ValueError),
        (lambda: ours.tag_session("00000000-0000-4000-8000-000000000000", "\u200b "), ValueError),
        (lambda: ours.delete_session("bad"), ValueError),
        (lambda: ours.delete_session("00000000-0000-4000-8000-000000000000"), FileNotFoundError),
    ],
    ids=["rename-bad-id", "rename-empty", "tag-bad-id", "tag-empty", "delete-bad-id",
         "delete-missing"],
)
def test_mutation_errors(store, call, error):
    with pytest.raises(error):
        call()


def test_tag_after_a_torn_line(store, tmp_path):
    cwd = tmp_path / "project"
    sid = write_session(cwd, [user(1, None, "hello")])
    path = transcript(cwd, sid)
    with path.open("a") as f:
        f.write('{"parentUuid":"torn')
    ours.tag_session(sid, "kept", directory=str(cwd))
    assert path.read_text().endswith('{"parentUuid":"torn\n{"type":"tag","tag":"kept","sessionId":"'
                                     + sid + '"}\n')
    assert official.get_session_info(sid).tag == "kept"
    assert ours.get_session_info(sid).tag == "kept"  # type: ignore[union-attr]


# Hand-built transcripts in Claude Code's format ----------------------------------------------


def uid(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def entry(kind: str, n: int, parent: int | None, message: Any, **extra: Any) -> JSON:
    return {
        "parentUuid": uid(parent) if parent is not None else None,
        "isSidechain": False,
        "type": kind,
        "message": message,
        "uuid": uid(n),
        "timestamp": f"2026-01-01T00:00:{n % 60:02d}.000Z",
        **extra,
    }


def user(n: int, parent: int | None, content: Any, **extra: Any) -> JSON:
    return entry("user", n, parent, {"role": "user", "content": content}, **extra)


def assistant(n: int, parent: int | None, block: JSON, message_id: str, **extra: Any) -> JSON:
    message = {"id": message_id, "role": "assistant", "content": [block]}
    return entry("assistant", n, parent, message, **extra)


def call_block(call_id: str) -> JSON:
    return {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": "ls"}}


def result_block(call_id: str) -> JSON:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "ok"}


def text(value: str) -> JSON:
    return {"type": "text", "text": value}


_counter = iter(range(10_000, 1_000_000))


def write_session(cwd: Path, entries: list[JSON], *, spaced: bool = False,
                  mtime: int | None = None, session_id: str | None = None) -> str:
    sid = session_id or uid(next(_counter))
    path = transcript(cwd, sid)
    path.parent.mkdir(parents=True, exist_ok=True)
    separators = (", ", ": ") if spaced else (",", ":")
    body = "".join(
        json.dumps({**e, "cwd": str(cwd), "sessionId": sid} if "uuid" in e else e,
                   separators=separators) + "\n"
        for e in entries
    )
    path.write_text(body)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return sid


def parallel_turn() -> list[JSON]:
    """One response with three tool calls written as chained lines; each result's parent
    is its own call, and the next turn continues from the last result."""
    return [
        user(1, None, "do three things"),
        assistant(2, 1, call_block("t1"), "m1"),
        assistant(3, 2, call_block("t2"), "m1"),
        user(4, 2, [result_block("t1")], sourceToolAssistantUUID=uid(2)),
        assistant(5, 3, call_block("t3"), "m1"),
        user(6, 3, [result_block("t2")]),
        user(7, 5, [result_block("t3")]),
        assistant(8, 7, text("done"), "m2"),
        {"type": "last-prompt", "lastPrompt": "do three things", "sessionId": "x"},
    ]


def branched() -> list[JSON]:
    return [
        user(1, None, "root"),
        assistant(2, 1, text("a"), "m1"),
        user(3, 2, "abandoned"),
        assistant(4, 3, text("old"), "m2"),
        user(5, 2, "taken"),
        {"type": "system", "uuid": uid(6), "parentUuid": uid(5), "subtype": "note"},
        assistant(7, 6, text("new"), "m3"),
        user(8, 7, "meta", isMeta=True),
        assistant(10, 8, text("final"), "m4"),
        user(9, 2, "side", isSidechain=True),
    ]


def titled() -> list[JSON]:
    return [
        {"type": "permission-mode", "permissionMode": "default", "sessionId": "x"},
        user(1, None, [text("<command-name>/init</command-name>")], gitBranch="main"),
        user(2, 1, "<local-command-stdout>out</local-command-stdout>"),
        user(3, 2, "[Request interrupted by user for tool use]"),
        user(4, 3, "caveat", isMeta=True),
        user(5, 4, "  " + "x" * 150 + "\n" + "y" * 100, gitBranch="feature"),
        assistant(6, 5, text("fine"), "m1", teamName="team"),
        {"type": "ai-title", "aiTitle": "An AI title", "sessionId": "x"},
        {"type": "custom-title", "customTitle": "Quote \" and \u00e9", "sessionId": "x"},
        {"type": "summary", "summary": "A summary", "leafUuid": uid(6)},
        {"type": "tag", "tag": "old", "sessionId": "x"},
        {"type": "tag", "tag": "new", "sessionId": "x"},
    ]


def only_commands() -> list[JSON]:
    return [user(1, None, "<command-name>/compact</command-name>"),
            user(2, 1, "<ide_selection>sel</ide_selection>"),
            user(3, 2, [result_block("t")]),
            {"type": "summary", "summary": "", "leafUuid": uid(2)}]


def tagged_then_cleared() -> list[JSON]:
    return [user(1, None, "tag me"), {"type": "tag", "tag": "x", "sessionId": "s"},
            {"type": "tag", "tag": "", "sessionId": "s"}]


def big() -> list[JSON]:
    """Head and tail are different windows; a title in the middle is not seen."""
    filler = [assistant(10 + i, 9 + i, text("z" * 2000), f"m{i}") for i in range(80)]
    return [
        user(9, None, "a long one"),
        *filler[:40],
        {"type": "custom-title", "customTitle": "hidden in the middle", "sessionId": "x"},
        *filler[40:],
        {"type": "ai-title", "aiTitle": "seen in the tail", "sessionId": "x"},
    ]


def huge_first_prompt() -> list[JSON]:
    return [user(1, None, "p" * 70_000), assistant(2, 1, text("ok"), "m1")]


SCENARIOS = {
    "parallel": (parallel_turn, False),
    "parallel-spaced": (parallel_turn, True),
    "branched": (branched, False),
    "titled": (titled, False),
    "titled-spaced": (titled, True),
    "only-commands": (only_commands, False),
    "tag-cleared": (tagged_then_cleared, False),
    "big": (big, False),
    "huge-first-prompt": (huge_first_prompt, False),
    "sidechain-first": (lambda: [user(1, None, "sub", isSidechain=True)], False),
    "metadata-only": (lambda: [{"type": "custom-title", "customTitle": "", "sessionId": "s"}],
                      False),
    "compact-summary": (lambda: [user(1, None, "summary of before", isCompactSummary=True),
                                 user(2, 1, "after compaction")], False),
    "no-messages": (lambda: [{"type": "queue-operation", "operation": "enqueue"}], False),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=list(SCENARIOS))
def test_hand_built_transcripts_agree(store, tmp_path, scenario):
    build, spaced = SCENARIOS[scenario]
    cwd = tmp_path / "project"
    sid = write_session(cwd, build(), spaced=spaced)
    assert_agree([None, str(cwd)], [sid])


def test_parallel_turn_is_returned_whole(store, tmp_path):
    cwd = tmp_path / "project"
    sid = write_session(cwd, parallel_turn())
    found = ours.get_session_messages(sid)
    assert [m.uuid for m in found] == [uid(n) for n in (1, 2, 3, 5, 4, 6, 7, 8)]
    info = ours.get_session_info(sid)
    assert info is not None and info.summary == "do three things"


def test_titles_tags_and_prompts(store, tmp_path):
    cwd = tmp_path / "project"
    sid = write_session(cwd, titled())
    info = ours.get_session_info(sid, str(cwd))
    assert info is not None
    assert info.custom_title == info.summary == 'Quote " and \u00e9'
    assert info.first_prompt == ("x" * 150 + " " + "y" * 49 + "\u2026")
    assert (info.tag, info.git_branch) == ("new", "feature")
    assert ours.get_session_info(write_session(cwd, only_commands())).first_prompt == "/compact"
    assert ours.get_session_info(write_session(cwd, tagged_then_cleared())).tag is None
    assert ours.get_session_info(write_session(cwd, big())).custom_title == "seen in the tail"
    assert [m.message["content"] for m in ours.get_session_messages(
        write_session(cwd, branched()))] == ["root", [text("a")], "taken", [text("new")],
                                             [text("final")]]


def test_many_projects_in_one_store(store, tmp_path):
    ids = []
    for n, scenario in enumerate(SCENARIOS):
        cwd = tmp_path / f"p{n % 3}"
        ids.append(write_session(cwd, SCENARIOS[scenario][0](), mtime=1_700_000_000 + n * 7))
    # The same session in two projects: the newer copy is listed once.
    twin = uid(999_999)
    write_session(tmp_path / "p0", [user(1, None, "old copy")], session_id=twin,
                  mtime=1_700_000_100)
    write_session(tmp_path / "p1", [user(1, None, "new copy")], session_id=twin,
                  mtime=1_700_000_200)
    listed = ours.list_sessions()
    assert [s.last_modified for s in listed] == sorted(
        (s.last_modified for s in listed), reverse=True)
    assert [s.summary for s in listed if s.session_id == twin] == ["new copy"]
    assert_agree([None, *(str(tmp_path / f"p{n}") for n in range(3))], [*ids, twin])


def test_reference_transcripts_agree(store, tmp_path):
    examples = shared_path("reference/captures/cli/transcript_example")
    cwd = tmp_path / "project"
    ids = []
    for n, source in enumerate(sorted(examples.glob("*.jsonl"))):
        sid = uid(500 + n)
        path = transcript(cwd, sid)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(source.read_bytes())
        ids.append(sid)
    assert ids
    assert all(ours.get_session_messages(sid) for sid in ids)
    assert_agree([None, str(cwd)], ids)


# Git worktrees ---------------------------------------------------------------------------


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                   check=True, capture_output=True, timeout=30)


def test_worktrees(store, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    try:
        git(repo, "init", "-q")
        git(repo, "commit", "-q", "--allow-empty", "-m", "init")
        git(repo, "worktree", "add", "-q", str(tmp_path / "tree"))
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git with worktrees is not available")
    sub = repo / "sub"
    sub.mkdir()
    in_repo = write_session(repo, [user(1, None, "in the repo")], mtime=1_700_000_001)
    in_tree = write_session(tmp_path / "tree", [user(1, None, "in the tree")],
                            mtime=1_700_000_002)
    in_sub = write_session(sub, [user(1, None, "in a subdirectory")], mtime=1_700_000_003)
    outside = write_session(tmp_path / "repo-other", [user(1, None, "not ours")])

    assert [s.session_id for s in ours.list_sessions(str(repo))] == [in_tree, in_repo]
    assert [s.session_id for s in ours.list_sessions(str(repo), include_worktrees=False)] == [
        in_repo]
    assert [s.session_id for s in ours.list_sessions(str(sub))] == [in_sub, in_tree, in_repo]
    assert ours.get_session_messages(in_tree, str(repo))[0].message["content"] == "in the tree"
    info = ours.get_session_info(in_tree, str(repo))
    assert info is not None and info.cwd == str(tmp_path / "tree")
    for flag in (True, False):
        for directory in (repo, sub, tmp_path / "tree"):
            assert dicts(ours.list_sessions(str(directory), include_worktrees=flag)) == dicts(
                official.list_sessions(str(directory), include_worktrees=flag))
    assert_agree([str(repo), str(sub)], [in_repo, in_tree, in_sub, outside])


def test_symlinked_directory_is_resolved(store, tmp_path):
    real = tmp_path / "real"
    sid = write_session(real, [user(1, None, "through a link")])
    link = tmp_path / "link"
    link.symlink_to(real)
    assert [s.session_id for s in ours.list_sessions(str(link))] == [sid]
    assert_agree([str(link)], [sid])



# Forking ----------------------------------------------------------------------------------


def normalized(path: Path) -> list[JSON]:
    """A fork's lines with its fresh uuids, ids and times replaced by stable names."""
    found = lines(path)
    names: dict[str, str] = {}
    for n, line in enumerate(found):
        if isinstance(line.get("uuid"), str):
            names[line["uuid"]] = f"line{n}"
    out = []
    for line in found:
        copy = {k: v for k, v in line.items() if k not in ("timestamp", "sessionId")}
        for key in ("uuid", "parentUuid", "logicalParentUuid"):
            if isinstance(copy.get(key), str):
                copy[key] = names.get(copy[key], "elsewhere")
        out.append(copy)
    return out


def fork_both(sid: str, directory: str | None = None, **kwargs: Any) -> tuple[str, str]:
    mine = ours.fork_session(sid, directory, **kwargs).session_id
    theirs = official.fork_session(sid, directory, **kwargs).session_id
    assert isinstance(mine, str) and paths.is_uuid(mine) and mine != theirs
    return mine, theirs


def assert_same_fork(cwd: Path, mine: str, theirs: str) -> None:
    assert normalized(transcript(cwd, mine)) == normalized(transcript(cwd, theirs))
    assert transcript(cwd, mine).stat().st_mode & 0o777 == 0o600


def test_fork_a_wisp_session(wisp, server, store):
    server.script(reply.tool_use("Bash", {"command": "echo hi"}), reply.text("all done"),
                  reply.text("after the fork"))
    sid = run(wisp, "run echo")
    source = ours.get_session_messages(sid)

    mine, theirs = fork_both(sid)
    assert_same_fork(wisp.cwd, mine, theirs)
    forked = ours.get_session_messages(mine, str(wisp.cwd))
    assert [m.message for m in forked] == [m.message for m in source]
    assert {m.session_id for m in forked} == {mine}
    assert not {m.uuid for m in forked} & {m.uuid for m in source}
    info = ours.get_session_info(mine)
    assert info is not None and info.summary == info.custom_title == "run echo (fork)"
    assert_agree([None, str(wisp.cwd)], [sid, mine, theirs])

    # wisp resumes the fork with the whole copied history.
    assert run(wisp, "continue the fork", "--resume", mine) == mine
    sent = server.requests[-1].body["messages"]
    assert len(sent) == 5 and "continue the fork" in json.dumps(sent[-1])
    assert [m.type for m in ours.get_session_messages(mine)] == ["user", "assistant"] * 3
    assert ours.get_session_messages(sid) == source  # the source is untouched

    short, short_theirs = fork_both(sid, str(wisp.cwd), up_to_message_id=source[1].uuid,
                                    title="  Two lines ")
    assert_same_fork(wisp.cwd, short, short_theirs)
    assert [m.message for m in ours.get_session_messages(short)] == [
        m.message for m in source[:2]]
    assert ours.get_session_info(short).custom_title == "Two lines"  # type: ignore[union-attr]


def test_fork_hand_built_sessions(store, tmp_path):
    cwd = tmp_path / "project"
    with_progress = [
        user(1, None, "start"),
        {"type": "progress", "uuid": uid(2), "parentUuid": uid(1), "data": {}},
        {"type": "progress", "uuid": uid(3), "parentUuid": uid(2), "data": {}},
        assistant(4, 3, text("after progress"), "m1", teamName="t", slug="s"),
        user(5, 4, "sub", isSidechain=True),
        {"type": "system", "uuid": uid(6), "parentUuid": uid(4), "subtype": "compact_boundary",
         "logicalParentUuid": uid(4)},
        user(7, 6, "summary", isCompactSummary=True),
        {"type": "content-replacement", "sessionId": "SID", "replacements": [{"a": 1}]},
    ]
    for build in (parallel_turn, titled, branched, lambda: with_progress):
        sid = write_session(cwd, build())
        path = transcript(cwd, sid)  # the replacements are kept only for the session's own id
        path.write_text(path.read_text().replace('"SID"', json.dumps(sid)))
        mine, theirs = fork_both(sid, str(cwd))
        assert_same_fork(cwd, mine, theirs)
        assert_agree([str(cwd)], [mine, theirs])
    kinds = [line.get("type") for line in lines(transcript(cwd, mine))]
    assert kinds == ["user", "assistant", "system", "user", "content-replacement",
                     "custom-title"]


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"session_id": "bad"}, ValueError),
        ({"up_to_message_id": "bad"}, ValueError),
        ({"up_to_message_id": "00000000-0000-4000-8000-000000000077"}, ValueError),
        ({"session_id": "00000000-0000-4000-8000-000000000078"}, FileNotFoundError),
    ],
    ids=["bad-id", "bad-up-to", "unknown-up-to", "unknown-session"],
)
def test_fork_errors(store, tmp_path, kwargs, error):
    sid = write_session(tmp_path / "project", [user(1, None, "hello")])
    arguments = {"session_id": sid, **kwargs}
    with pytest.raises(error):
        ours.fork_session(**arguments)
    with pytest.raises(error):
        official.fork_session(**arguments)
