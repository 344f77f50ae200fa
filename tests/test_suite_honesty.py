"""Checks of the test suite itself, so its green keeps meaning what it says.

- Fixtures outside the repository are found relative to the checkout (tests/shared_fixtures),
  never by an absolute path that exists only where a test was written.
- A broad `except` (bare, Exception, BaseException) in a test must re-raise or fail the
  test; the few that turn an exception into a value a test then asserts on are listed
  below with the reason. A new one that swallows errors would make errors look like
  agreement.
- A fixed sleep outside a polling loop must not stand in for a condition: tests wait with
  a deadline on what they need (tests/waits.py). The sleeps that remain are listed below
  with why time itself is what they wait for (a lease or TTL lapsing, a pause a person
  makes, a check that something does *not* happen, a handler made slow on purpose).
"""

from __future__ import annotations

import ast
import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
BROAD = {"Exception", "BaseException"}
# (file, enclosing function) → why the exception becomes a value the test asserts on.
SWALLOWING_ALLOWED = {
    ("tests/sdk/test_python_sdk_bypass.py", "scenario"):
        "the official SDK raises a bare Exception; the test asserts its exact message",
    ("tests/sdk/test_python_sdk_first_run.py", "collect"):
        "what the SDK raises is what a user gets; the tests assert its type and message",
    ("tests/security/harness.py", "answer"):
        "a failed probe is recorded with its case, which then fails on that value",
    ("tests/security/conftest.py", "__call__"):
        "kept and raised again for every case of the batch",
    ("tests/privileges.py", "unprivileged"):
        "carried from the forked child to the parent, which raises it",
}


TIME_PASSING = "a lease or TTL lapsing is the behaviour under test: only time makes it"
ABSENCE = ("checks that something does not happen (a duplicate, a late write): no event "
           "marks an absence, so it looks again after a pause")
KEY_PAUSE = "the pause a person makes between two keys is the input under test"
# (file, enclosing function) → why a sleep outside a polling loop is not a condition.
SLEEPS_ALLOWED = {
    ("tests/serve/deployment_scenarios.py", "scheduled_run"): ABSENCE,
    ("tests/serve/store_fence.py", "check_the_lease_fences_appends"): TIME_PASSING,
    ("tests/serve/test_store_contract.py", "test_lease_expiry_renew_and_release"):
        TIME_PASSING,
    ("tests/serve/test_store_contract.py", "test_sessions_needing_work"): TIME_PASSING,
    ("tests/serve/pg/test_postgres_store.py",
     "test_previews_are_watched_and_published_across_connections"): TIME_PASSING,
    ("tests/serve/test_sdk_environments.py", "test_the_work_queue_leases_heartbeats_and_stops"):
        TIME_PASSING,
    ("tests/serve/pg/test_scale_out.py",
     "test_events_no_turn_waits_for_are_taken_up_once_across_api_processes"): ABSENCE,
    ("tests/serve/test_webhooks.py",
     "test_a_failing_receiver_gets_the_same_delivery_until_it_answers"):
        ABSENCE + "; 0.5 s is five of the test's 0.1 s retry backoffs",
    ("tests/serve/test_http.py", "test_sse_client_disconnect_stops_the_producer"): ABSENCE,
    ("tests/control/test_dispatcher.py", "scenario"): ABSENCE,
    ("tests/cassette/test_record_replay.py", "read_past_the_end"): ABSENCE,
    ("tests/serve/test_http.py", "slow"): "a handler made slow on purpose (drained, not cut)",
    ("tests/mcp/remote_tools.py", "wait"): "the MCP tool under test is a sleep",
    ("tests/testing/test_inprocess_models.py", "run"):
        "lets a 10 s reply begin; the cancel must hold at any point, which the bound checks",
    ("tests/tui/test_keys.py", "test_the_key_typed_after_esc_is_not_swallowed"): KEY_PAUSE,
    ("tests/tui/test_keys.py", "test_esc_then_a_letter_types_the_letter"): KEY_PAUSE,
    ("tests/tui/test_rewind.py", "test_esc_esc_rewinds_code_and_conversation_to_before_a_prompt"):
        KEY_PAUSE,
    ("tests/tui/test_rewind.py", "test_esc_esc_clears_a_draft_and_up_brings_it_back"):
        KEY_PAUSE,
    ("tests/subagents/reference.py", "interrupt_turn"):
        "a scenario played against the reference CLI too, where only its output is seen: "
        "the pause places the control request as in the recorded run",
    ("tests/subagents/reference.py", "stop_command"):
        ABSENCE + " (a stopped task's notice must wait for a turn)",
    ("tests/subagents/reference.py", "stop_subagent"):
        "a scenario played against the reference CLI too: the pause places the stop while "
        "the subagent's command runs, as in the recorded run",
}
SLEEPERS = {"time", "asyncio", "anyio", "trio"}


def _sources() -> list[Path]:
    return [p for p in TESTS.rglob("*.py") if "node_modules" not in p.parts]


def _is_broad(handler: ast.ExceptHandler) -> bool:
    kind = handler.type
    return kind is None or (isinstance(kind, ast.Name) and kind.id in BROAD)


def _fails_or_raises(handler: ast.ExceptHandler) -> bool:
    for node in ast.walk(ast.Module(body=handler.body, type_ignores=[])):
        if isinstance(node, ast.Raise):
            return True
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "fail"):
            return True
    return False


def _handlers_by_function(tree: ast.Module) -> list[tuple[str, ast.ExceptHandler]]:
    """Each except handler with the name of the innermost function around it."""
    found: list[tuple[str, ast.ExceptHandler]] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name)
                continue
            if isinstance(child, ast.ExceptHandler):
                found.append((function, child))
            visit(child, function)

    visit(tree, "<module>")
    return found


def _swallowing_handlers() -> list[tuple[str, str, int]]:
    found = []
    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function, handler in _handlers_by_function(tree):
            if _is_broad(handler) and not _fails_or_raises(handler):
                found.append((path.relative_to(ROOT).as_posix(), function, handler.lineno))
    return found


def test_no_broad_except_swallows_errors() -> None:
    unexplained = sorted({(f, fn, line) for f, fn, line in _swallowing_handlers()
                          if (f, fn) not in SWALLOWING_ALLOWED})
    assert unexplained == [], "a broad except that neither raises nor fails:\n" + "\n".join(
        f"  {f}:{line} in {fn}" for f, fn, line in unexplained)


def test_the_allowlist_names_only_real_handlers() -> None:
    present = {(f, fn) for f, fn, _ in _swallowing_handlers()}
    assert set(SWALLOWING_ALLOWED) <= present, set(SWALLOWING_ALLOWED) - present


def test_no_test_reads_fixtures_by_an_absolute_work_path() -> None:
    offenders = [p.relative_to(ROOT).as_posix() for p in _sources()
                 if p.name != "test_suite_honesty.py"
                 and 'Path("/work/' in p.read_text(encoding="utf-8")]
    assert offenders == [], offenders


def _is_sleep(node: ast.AST) -> bool:
    """`time.sleep(x)` and the like (a bare `sleep(x)` too, as `from time import sleep`
    gives), except `asyncio.sleep(0)` (a yield to the loop)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if not ((isinstance(func, ast.Attribute) and func.attr == "sleep"
             and isinstance(func.value, ast.Name) and func.value.id in SLEEPERS)
            or (isinstance(func, ast.Name) and func.id == "sleep")):
        return False
    first = node.args[0] if node.args else None
    return not (isinstance(first, ast.Constant) and first.value == 0)


def _fixed_sleeps(tree: ast.Module) -> list[tuple[str, int]]:
    """Sleeps outside any loop, with the innermost function around each. A sleep inside
    a loop is a poll (or paces a producer); one outside waits a fixed time for nothing
    it looks at."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, function: str, in_loop: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name, False)
                continue
            if _is_sleep(child) and not in_loop:
                found.append((function, child.lineno))
            visit(child, function, in_loop or isinstance(
                child, (ast.While, ast.For, ast.AsyncFor)))

    visit(tree, "<module>", False)
    return found


def _all_fixed_sleeps() -> list[tuple[str, str, int]]:
    return [(path.relative_to(ROOT).as_posix(), function, line)
            for path in _sources()
            for function, line in _fixed_sleeps(ast.parse(path.read_text(encoding="utf-8")))]


def test_no_fixed_sleep_stands_in_for_a_condition() -> None:
    unexplained = sorted((f, fn, line) for f, fn, line in _all_fixed_sleeps()
                         if (f, fn) not in SLEEPS_ALLOWED)
    assert unexplained == [], (
        "a fixed sleep outside a polling loop; wait on the condition with a deadline "
        "(tests/waits.py), or list it in SLEEPS_ALLOWED with the reason:\n" + "\n".join(
            f"  {f}:{line} in {fn}" for f, fn, line in unexplained))


def test_the_sleep_allowlist_names_only_real_sleeps() -> None:
    present = {(f, fn) for f, fn, _ in _all_fixed_sleeps()}
    assert set(SLEEPS_ALLOWED) <= present, set(SLEEPS_ALLOWED) - present


def test_the_sleep_check_sees_a_fixed_sleep_and_passes_a_poll() -> None:
    source = """
import asyncio, time
def waits():
    time.sleep(1)
def also_waits():
    sleep(2)
async def polls():
    while not done():
        await asyncio.sleep(0.1)
    await asyncio.sleep(0)
"""
    assert _fixed_sleeps(ast.parse(source)) == [("waits", 4), ("also_waits", 6)]


def test_the_except_check_sees_a_handler_that_swallows() -> None:
    source = """
def swallows():
    try:
        run()
    except Exception:
        return None
def reraises():
    try:
        run()
    except BaseException:
        cleanup()
        raise
def narrow():
    try:
        run()
    except ValueError:
        pass
"""
    handlers = _handlers_by_function(ast.parse(source))
    assert [(fn, _is_broad(h) and not _fails_or_raises(h)) for fn, h in handlers] == [
        ("swallows", True), ("reraises", False), ("narrow", False)]


def test_every_mutant_still_applies() -> None:
    """scripts/mutants runs on demand, not in CI: without this, a refactoring that moves
    the code a mutant edits would leave it broken until someone next ran the check. A
    failure here names the mutant to re-aim at the moved code (docs/testing.md)."""
    mutants = runpy.run_path(str(ROOT / "scripts" / "mutants"), run_name="mutants_list")
    listed = mutants["MUTANTS"]
    assert len(listed) >= 30 and len({m.name for m in listed}) == len(listed)
    for mutant in listed:
        mutants["mutated_source"](mutant)  # raises SystemExit naming a stale mutant
