"""5-field POSIX cron expressions (minute hour day-of-month month day-of-week) in an IANA
timezone, as deployment schedules take them: `*`, numbers, ranges `a-b`, steps `*/n` and
`a-b/n`, lists `a,b`; day-of-week 0-7 (0 and 7 are Sunday). As POSIX says, when both
day-of-month and day-of-week are restricted a day matching either one fires. Seconds or
year fields, names (`MON`), `L`, `W`, `#`, `?` and `@daily`-style shortcuts are refused.

    schedule = Cron.parse("0 9 * * 1-5", "Europe/Oslo")
    schedule.after(moment)         # the first matching minute after `moment` (UTC)
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day-of-month", 1, 31), ("month", 1, 12),
           ("day-of-week", 0, 7))
# Enough to find any valid expression's next match (Feb 29 on a given weekday recurs
# within 28 years); an expression that never matches (Feb 30) gives up there.
_HORIZON = timedelta(days=366 * 29)


class CronError(ValueError):
    pass


def _number(text: str, name: str, lo: int, hi: int) -> int:
    if not text.isdigit() or not lo <= int(text) <= hi:
        raise CronError(f"{name}: {text!r} is not a number from {lo} to {hi}")
    return int(text)


def _field(text: str, name: str, lo: int, hi: int) -> frozenset[int]:
    values: set[int] = set()
    for item in text.split(","):
        span, _, step_text = item.partition("/")
        step = _number(step_text, name, 1, hi) if step_text else 1
        if span == "*":
            first, last = lo, hi
        elif "-" in span:
            a, _, b = span.partition("-")
            first, last = _number(a, name, lo, hi), _number(b, name, lo, hi)
            if first > last:
                raise CronError(f"{name}: the range {span!r} runs backwards")
        else:
            first = _number(span, name, lo, hi)
            last = hi if step_text else first
        values.update(range(first, last + 1, step))
    return frozenset(values)


class Cron:
    __slots__ = ("days", "dom_any", "dow_any", "hours", "minutes", "months", "weekdays",
                 "zone")

    def __init__(self, fields: list[frozenset[int]], restricted: tuple[bool, bool],
                 zone: ZoneInfo) -> None:
        self.minutes, self.hours, self.days, self.months, weekdays = fields
        self.weekdays = frozenset(d % 7 for d in weekdays)  # 7 is Sunday too
        self.dom_any, self.dow_any = not restricted[0], not restricted[1]
        self.zone = zone

    @classmethod
    def parse(cls, expression: str, timezone: str) -> Cron:
        parts = expression.split()
        if len(parts) != 5:
            raise CronError("expected 5 fields: minute hour day-of-month month day-of-week")
        try:
            zone = ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise CronError(f"timezone: {timezone!r} is not an IANA timezone") from None
        fields = [_field(p, *spec) for p, spec in zip(parts, _FIELDS, strict=True)]
        return cls(fields, (parts[2] != "*", parts[4] != "*"), zone)

    def _day_matches(self, local: datetime) -> bool:
        dom = local.day in self.days
        dow = (local.isoweekday() % 7) in self.weekdays
        if self.dom_any or self.dow_any:
            return dom and dow
        return dom or dow

    def after(self, moment: datetime) -> datetime | None:
        """The first matching minute strictly after `moment`, in UTC (None: never).
        Walks local days, then minutes, so a sparse schedule costs little."""
        start = moment.astimezone(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)
        local = start.astimezone(self.zone)
        day = local.replace(hour=0, minute=0, tzinfo=None)
        while day - local.replace(tzinfo=None) < _HORIZON:
            if day.month in self.months and self._day_matches(day):
                found = self._in_day(day, start)
                if found is not None:
                    return found
            day += timedelta(days=1)
        return None

    def _in_day(self, day: datetime, start: datetime) -> datetime | None:
        for hour in sorted(self.hours):
            for minute in sorted(self.minutes):
                wall = day.replace(hour=hour, minute=minute).replace(tzinfo=self.zone)
                instant = wall.astimezone(UTC)
                # A wall time skipped by a DST change maps onto another instant: skip it.
                if instant.astimezone(self.zone).replace(tzinfo=None) != wall.replace(
                        tzinfo=None):
                    continue
                if instant >= start:
                    return instant
        return None

    def upcoming(self, moment: datetime, count: int = 5) -> list[datetime]:
        out: list[datetime] = []
        at: datetime | None = moment
        while len(out) < count and at is not None:
            at = self.after(at)
            if at is not None:
                out.append(at)
        return out
