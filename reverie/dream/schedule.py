"""When a dream is due: at each of the day's slots (the seed's 07:00 and 22:00) in the
namespace's timezone, run on the first idle after the slot passed. Imports only the
standard library (the config checks its values with it)."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def parse_times(text: str) -> tuple[time, ...]:
    """``"07:00,22:00"`` → the day's slots, sorted; a ValueError names a bad one."""
    slots = []
    for part in text.split(","):
        raw = part.strip()
        try:
            hour, minute = raw.split(":")
            slots.append(time(int(hour), int(minute)))
        except ValueError as exc:
            raise ValueError(f"times must be HH:MM, comma-separated; {raw!r} is not") from exc
    if len(set(slots)) != len(slots):
        raise ValueError(f"times repeats a slot: {text!r}")
    return tuple(sorted(slots))


def zone(name: str) -> tzinfo:
    """An IANA timezone by name ("" or "UTC": UTC); a ValueError when unknown."""
    if not name or name.upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown timezone {name!r}") from exc


def _slots_of(day: date, slots: tuple[time, ...], tz: tzinfo) -> list[datetime]:
    return [datetime.combine(day, slot, tz).astimezone(UTC) for slot in slots]


def last_slot(now: datetime, slots: tuple[time, ...], tz: tzinfo) -> datetime:
    """The latest slot at or before ``now``."""
    today = now.astimezone(tz).date()
    for day in (today, today - timedelta(days=1)):
        passed = [s for s in _slots_of(day, slots, tz) if s <= now]
        if passed:
            return passed[-1]
    return _slots_of(today - timedelta(days=2), slots, tz)[-1]


def next_slot(after: datetime, slots: tuple[time, ...], tz: tzinfo) -> datetime:
    """The first slot strictly after ``after``."""
    today = after.astimezone(tz).date()
    for day in (today, today + timedelta(days=1), today + timedelta(days=2)):
        ahead = [s for s in _slots_of(day, slots, tz) if s > after]
        if ahead:
            return ahead[0]
    raise ValueError("no slot within two days")  # cannot happen with at least one slot


def next_due(
    last_run: datetime | None, now: datetime, slots: tuple[time, ...], tz: tzinfo
) -> datetime:
    """When the next dream falls due: the first slot after the last run; a namespace that
    never dreamt is due at the latest slot that has passed (so now)."""
    if last_run is None:
        return last_slot(now, slots, tz)
    return next_slot(last_run, slots, tz)


def evening_passed(
    since: datetime, now: datetime, slots: tuple[time, ...], tz: tzinfo
) -> datetime | None:
    """The latest evening slot (the day's last) in ``(since, now]``: a dream that follows
    one writes that day's daily report, even when no idle came between the evening and the
    next morning's slot (a host whose users sleep). None when none passed."""
    day = now.astimezone(tz).date()
    for _ in range(2):
        evening = datetime.combine(day, slots[-1], tz).astimezone(UTC)
        if since < evening <= now:
            return evening
        if evening <= since:
            return None
        day -= timedelta(days=1)
    return None


def local_day(when: datetime, tz: tzinfo) -> str:
    """The report's date: ``when``'s day in the namespace's timezone."""
    return when.astimezone(tz).date().isoformat()
