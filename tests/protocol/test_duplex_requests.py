"""Invalid control requests through a real wisp duplex process: each is answered with an
error naming the field, the next request is answered as usual, and the session ends as
it would have (exit 0)."""

from __future__ import annotations

from tests.protocol.cases import INVALID, MODES
from wisp.testing import reply

# One of each kind of fault: missing, wrong type, bad value, a field only one of two names
# may carry, the pinned phrase of a bad permission mode.
REPRESENTATIVE = [case for case in INVALID if (case[0], tuple(case[1])) in {
    ("set_permission_mode", ()),
    ("set_permission_mode", ("mode",)),
    ("set_model", ("model",)),
    ("set_max_thinking_tokens", ("max_thinking_tokens",)),
    ("mcp_toggle", ("serverName", "enabled")),
    ("mcp_reconnect", ()),
    ("stop_task", ("task_id",)),
    ("apply_flag_settings", ()),
    ("rename_session", ("title",)),
    ("interrupt", ("cancel_queued",)),
}]


def test_each_invalid_request_gets_an_error_and_the_session_goes_on(duplex, server):
    assert len(REPRESENTATIVE) >= 10
    server.script(reply.text("still here"))
    wisp = duplex()
    wisp.initialize()
    for subtype, fields, error, code in REPRESENTATIVE:
        response = wisp.call(subtype, **fields)
        expected = {"subtype": "error", "request_id": response["request_id"], "error": error}
        assert response == ({**expected, "error_code": code} if code else expected)
        assert wisp.call("get_settings")["subtype"] == "success"  # the next one works
    wisp.user("hi")
    result = wisp.wait_frame("result")
    assert wisp.finish() == 0
    assert result["result"] == "still here"


def test_a_bad_mode_keeps_its_phrase_and_changes_nothing(duplex):
    wisp = duplex()
    response = wisp.call("set_permission_mode", mode="bogusMode")
    assert response["error"] == f"Cannot set permission mode: must be one of {MODES}"
    assert response["error_code"] == "invalid_mode"
    assert wisp.call("get_settings")["response"]["effective"]["permissionMode"] == "default"
    assert wisp.finish() == 0


def test_an_invalid_first_initialize_is_answered_with_its_error_then_a_valid_one_works(duplex):
    """The early answer (written before the engine loads) is only for a valid initialize."""
    wisp = duplex()
    bad = wisp.call("initialize", hooks=5)
    assert bad == {"subtype": "error", "request_id": bad["request_id"],
                   "error": "Invalid initialize request: `hooks` must be an object or null"}
    good = wisp.initialize(title="ok")
    assert good["response"]["hooks_applied"] is True
    # It passes the protocol's checks; the handler refuses it with the reference's words.
    assert wisp.call("rename_session", title=None)["error"] == (
        "rename_session: title must be a string")
    assert wisp.finish() == 0


def test_unknown_fields_are_tolerated(duplex):
    wisp = duplex()
    wisp.initialize(someFutureField={"x": 1}, hooks={"SomeFutureEvent": [
        {"matcher": None, "hookCallbackIds": ["hook_0"]}]})
    response = wisp.call("set_permission_mode", mode="plan", answers_bypass_switch_back=True)
    assert response["response"] == {"mode": "plan"}
    assert wisp.finish() == 0
