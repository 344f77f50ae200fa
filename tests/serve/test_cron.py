"""Deployment schedules' cron expressions: the fields, POSIX's day-of-month/day-of-week
rule, timezones and daylight-saving changes, and what is refused."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from wisp.serve.cron import Cron, CronError


def at(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def test_steps_ranges_and_lists() -> None:
    cron = Cron.parse("*/15 8-9 * * *", "UTC")
    assert cron.upcoming(at(2026, 12, 5, 9, 40), 3) == [
        at(2026, 12, 5, 9, 45), at(2026, 12, 6, 8, 0), at(2026, 12, 6, 8, 15)]
    assert Cron.parse("5,7 0 * * *", "UTC").after(at(2026, 1, 1, 0, 5)) == at(2026, 1, 1, 0, 7)
    assert Cron.parse("10/20 * * * *", "UTC").upcoming(at(2026, 1, 1, 0, 0), 3) == [
        at(2026, 1, 1, 0, 10), at(2026, 1, 1, 0, 30), at(2026, 1, 1, 0, 50)]


def test_a_match_is_strictly_after_the_moment() -> None:
    assert Cron.parse("* * * * *", "UTC").after(at(2026, 1, 1, 0, 0)) == at(2026, 1, 1, 0, 1)


def test_weekdays_in_a_timezone() -> None:
    # 2026-12-05 is a Saturday; 09:00 in Oslo is 08:00 UTC in winter.
    assert Cron.parse("0 9 * * 1-5", "Europe/Oslo").after(at(2026, 12, 5, 12, 0)) == at(
        2026, 12, 7, 8, 0)
    # 0 and 7 are both Sunday.
    assert Cron.parse("0 0 * * 7", "UTC").after(at(2026, 12, 5, 0, 0)) == at(2026, 12, 6, 0, 0)


def test_day_of_month_or_day_of_week_when_both_are_restricted() -> None:
    cron = Cron.parse("0 0 1 * 0", "UTC")  # the 1st, and every Sunday
    assert cron.upcoming(at(2026, 3, 27, 12, 0), 3) == [
        at(2026, 3, 29, 0, 0), at(2026, 4, 1, 0, 0), at(2026, 4, 5, 0, 0)]


def test_a_wall_time_skipped_by_daylight_saving_does_not_fire() -> None:
    # Oslo skips 02:00-03:00 on 2026-03-29.
    cron = Cron.parse("30 2 * * *", "Europe/Oslo")
    assert cron.upcoming(at(2026, 3, 27, 12, 0), 2) == [at(2026, 3, 28, 1, 30),
                                                        at(2026, 3, 30, 0, 30)]


def test_an_expression_that_never_matches() -> None:
    assert Cron.parse("0 0 30 2 *", "UTC").after(at(2026, 1, 1)) is None


@pytest.mark.parametrize(("expression", "timezone", "message"), [
    ("* * * *", "UTC", "5 fields"),
    ("0 0 * * * 2026", "UTC", "5 fields"),
    ("60 * * * *", "UTC", "minute"),
    ("* * * * MON", "UTC", "day-of-week"),
    ("@daily", "UTC", "5 fields"),
    ("0 0 L * *", "UTC", "day-of-month"),
    ("5-1 * * * *", "UTC", "backwards"),
    ("* * * * *", "Mars/Base", "timezone"),
])
def test_what_is_refused(expression: str, timezone: str, message: str) -> None:
    with pytest.raises(CronError, match=message):
        Cron.parse(expression, timezone)
