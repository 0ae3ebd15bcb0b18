from datetime import UTC, datetime, timedelta

import pytest

from reverie import ManualClock, SystemClock


def test_manual_clock_moves_only_when_told() -> None:
    clock = ManualClock(datetime(2026, 1, 1, tzinfo=UTC))
    assert clock.now() == clock.now() == datetime(2026, 1, 1, tzinfo=UTC)
    clock.advance(timedelta(days=3))
    assert clock.now() == datetime(2026, 1, 4, tzinfo=UTC)
    with pytest.raises(ValueError):
        clock.advance(timedelta(seconds=-1))
    with pytest.raises(ValueError):
        ManualClock(datetime(2026, 1, 1))


def test_system_clock_is_aware_utc() -> None:
    assert SystemClock().now().tzinfo is UTC
