"""`wisp.values.Value` stands in for `@dataclass(frozen=True)` on the start-up path: each
record must behave as the frozen dataclass with the same fields would, which these tests
check side by side (equality, hash, repr, immutability, matching, copying)."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest

from wisp.engine.decide import Finish, MaxTurnsReached, RunTools
from wisp.engine.outcome import Aborted, HookStopped, LimitHit, Success
from wisp.values import Record, Value, field, replace


@dataclasses.dataclass(frozen=True)
class DataSuccess:
    text: str
    structured_output: Any = None


@dataclasses.dataclass(frozen=True)
class DataHookStopped(DataSuccess):
    reason: str = ""
    terminal_reason: str | None = "hook_stopped"


def test_repr_names_every_field_as_the_dataclass_does() -> None:
    assert repr(Success("hi")) == repr(DataSuccess("hi")).replace("DataSuccess", "Success")
    stopped = HookStopped("x", reason="r", terminal_reason=None)
    assert repr(stopped) == repr(DataHookStopped("x", reason="r", terminal_reason=None)
                                 ).replace("DataHookStopped", "HookStopped")
    assert repr(LimitHit(MaxTurnsReached(3))) == "LimitHit(limit=MaxTurnsReached(max_turns=3))"


def test_equality_and_hash_go_field_by_field_within_one_class() -> None:
    assert Success("a", {"k": 1}) == Success("a", {"k": 1})
    assert Success("a") != Success("b")
    assert hash(Finish("end_turn")) == hash(Finish("end_turn"))
    assert len({Aborted("tools"), Aborted("tools"), Aborted("streaming")}) == 2
    # As with dataclasses, a subclass instance with the same leading fields is not equal,
    # and neither is another class's with the same values.
    assert Success("x") != HookStopped("x")
    assert HookStopped("x") != Success("x")
    assert (DataSuccess("x") == DataHookStopped("x")) is False
    assert Finish("a") != Aborted("a")
    assert Finish("a") != ("a",)


def test_an_unhashable_field_makes_the_record_unhashable_as_in_a_dataclass() -> None:
    with pytest.raises(TypeError):
        hash(RunTools([{"type": "tool_use"}]))
    assert RunTools([{"id": 1}]) == RunTools([{"id": 1}])


def test_records_are_frozen() -> None:
    done = Success("a")
    with pytest.raises(AttributeError, match="cannot assign to field 'text'"):
        done.text = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        done.extra = 1
    with pytest.raises(AttributeError, match="cannot delete field 'text'"):
        del done.text
    assert done.text == "a"


def test_defaults_and_keywords_are_those_of_the_dataclass() -> None:
    stopped = HookStopped("t", reason="why")
    assert (stopped.text, stopped.structured_output, stopped.reason, stopped.terminal_reason) \
        == ("t", None, "why", "hook_stopped")
    assert HookStopped("t", None, "why", None) == HookStopped("t", reason="why",
                                                               terminal_reason=None)
    assert HookStopped.__match_args__ == DataHookStopped.__match_args__
    assert Success.__match_args__ == DataSuccess.__match_args__


def test_patterns_match_by_position_and_by_keyword() -> None:
    match HookStopped("t", reason="why"):
        case HookStopped(text, _, reason):
            assert (text, reason) == ("t", "why")
        case _:
            pytest.fail("no match")
    match LimitHit(MaxTurnsReached(2)):
        case LimitHit(limit=MaxTurnsReached(max_turns=n)):
            assert n == 2
        case _:
            pytest.fail("no match")


@pytest.mark.parametrize("record", [
    Success("a", [1]), HookStopped("a", reason="r", terminal_reason=None), Finish(None),
    LimitHit(MaxTurnsReached(1)),
])
def test_copy_and_pickle_rebuild_an_equal_record(record: Value) -> None:
    assert copy.copy(record) == record
    assert copy.deepcopy(record) == record
    again = pickle.loads(pickle.dumps(record))
    assert again == record and type(again) is type(record)


def test_a_required_field_after_a_default_is_refused_when_first_built() -> None:
    class Bad(Value):
        first: int = 0
        second: int  # type: ignore[misc]

    with pytest.raises(TypeError, match="without a default follows"):
        Bad(1, 2)


def test_the_constructor_is_that_of_the_dataclass() -> None:
    with pytest.raises(TypeError):
        Success()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Finish("a", "b")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Success("a", nope=1)  # type: ignore[call-arg]
    assert Success(text="a", structured_output=2) == Success("a", 2)


# --- Record: the mutable dataclass --------------------------------------------------------


class Tally(Record):
    name: str
    counts: list[int] = field(default_factory=list)
    label: str = "none"


@dataclasses.dataclass
class DataTally:
    name: str
    counts: list[int] = dataclasses.field(default_factory=list)
    label: str = "none"


def test_a_record_behaves_as_the_mutable_dataclass() -> None:
    ours, theirs = Tally("a"), DataTally("a")
    assert repr(ours) == repr(theirs).replace("DataTally", "Tally")
    assert Tally("a") == Tally("a", [], "none") and Tally("a") != Tally("b")
    assert Tally("a") != DataTally("a")
    assert Tally.__hash__ is None and DataTally.__hash__ is None
    assert Tally.__match_args__ == DataTally.__match_args__
    # Plain defaults stay on the class; a factory's does not, as with dataclasses.
    assert Tally.label == DataTally.label == "none"
    assert not hasattr(Tally, "counts") and not hasattr(DataTally, "counts")


def test_each_record_gets_a_fresh_default_and_may_change() -> None:
    first, second = Tally("a"), Tally("a")
    first.counts.append(1)
    assert second.counts == []
    first.label = "changed"
    first.extra = True  # type: ignore[attr-defined]  # a dataclass takes other attributes too
    assert (first.label, first.extra) == ("changed", True)  # type: ignore[attr-defined]
    given = [7]
    assert Tally("b", given).counts is given


def test_a_record_that_holds_itself_shows_dots_there() -> None:
    loop = Tally("a")
    loop.counts.append(loop)  # type: ignore[arg-type]
    assert repr(loop) == "Tally(name='a', counts=[...], label='none')"


def test_replace_is_dataclasses_replace() -> None:
    tally = Tally("a", [1])
    again = replace(tally, label="x")
    assert again == Tally("a", [1], "x") and again.counts is tally.counts
    assert replace(Success("a"), text="b") == Success("b")
    with pytest.raises(TypeError):
        replace(tally, nope=1)


def test_a_plain_default_is_a_class_attribute_as_on_a_dataclass() -> None:
    from wisp.engine.retry import RetryPolicy

    assert RetryPolicy.max_retries == 10  # RetryPolicy.from_env reads it so
    assert HookStopped.terminal_reason == DataHookStopped.terminal_reason == "hook_stopped"
    assert RetryPolicy.from_env({}) == RetryPolicy()
    assert RetryPolicy.from_env({"CLAUDE_CODE_MAX_RETRIES": "1"}).max_retries == 1


def test_a_value_that_holds_itself_shows_dots_there_as_the_frozen_dataclass() -> None:
    ours, theirs = Success("a", []), DataSuccess("a", [])
    ours.structured_output.append(ours)
    theirs.structured_output.append(theirs)
    assert repr(ours) == repr(theirs).replace("DataSuccess", "Success")
    assert repr(ours) == "Success(text='a', structured_output=[...])"


def test_the_dataclasses_functions_do_not_apply_as_the_module_says() -> None:
    # The documented limit: read the fields from `__match_args__`, copy with `replace`.
    assert not dataclasses.is_dataclass(Success("a"))
    with pytest.raises(TypeError):
        dataclasses.fields(Success("a"))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        dataclasses.asdict(Tally("a"))  # type: ignore[call-overload]
    assert {name: getattr(Tally("a"), name) for name in Tally.__match_args__} == {
        "name": "a", "counts": [], "label": "none"}
