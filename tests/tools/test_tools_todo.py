from __future__ import annotations

from tests.tools.conftest import Caller
from wisp.tools.todo_write import TodoWrite

PLAN = [
    {"content": "Write tests", "status": "completed", "activeForm": "Writing tests"},
    {"content": "Fix bug", "status": "in_progress", "activeForm": "Fixing bug"},
    {"content": "Ship it", "status": "pending", "activeForm": "Shipping it"},
]


def test_stores_todos_in_session_state(call: Caller) -> None:
    result = call(TodoWrite(), {"todos": PLAN})
    assert not result.is_error
    assert str(result.content).startswith("Todos have been modified successfully")
    assert result.data == {"oldTodos": [], "newTodos": PLAN}
    assert call.state["todos"] == PLAN


def test_reports_previous_list(call: Caller) -> None:
    call(TodoWrite(), {"todos": PLAN})
    update = [{**item, "status": "completed"} for item in PLAN[:2]] + PLAN[2:]
    result = call(TodoWrite(), {"todos": update})
    assert result.data["oldTodos"] == PLAN
    assert result.data["newTodos"] == update


def test_fully_completed_list_is_cleared(call: Caller) -> None:
    done = [{**item, "status": "completed"} for item in PLAN]
    result = call(TodoWrite(), {"todos": done})
    assert result.data["newTodos"] == done
    assert call.state["todos"] == []


def test_rejects_bad_items(call: Caller) -> None:
    bad_status = call(
        TodoWrite(), {"todos": [{"content": "x", "status": "doing", "activeForm": "Xing"}]}
    )
    assert bad_status.is_error
    assert "status" in str(bad_status.content)
    missing = call(TodoWrite(), {"todos": [{"content": "x", "status": "pending"}]})
    assert missing.is_error
    assert "activeForm" in str(missing.content)
    not_list = call(TodoWrite(), {"todos": "x"})
    assert not_list.is_error
    assert "todos" not in call.state


def test_metadata() -> None:
    assert TodoWrite().kind == "meta"
    assert TodoWrite().is_read_only({"todos": []})
