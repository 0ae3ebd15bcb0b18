"""reverie's one exception tree; no raw sqlite3 or httpx error crosses the public API.

ReverieError
├── ConfigError          a bad setting, file or environment value
├── ClosedError          the runtime is not open (or was closed) for this call
├── StoreError           the database failed
│   └── StoreBusy        the database stayed locked past the busy timeout
└── ToolInputError       a tool call's arguments were rejected (surfaced as decision ERROR)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager


class ReverieError(Exception):
    """Base of every error reverie raises."""


class ConfigError(ReverieError):
    """A setting, settings file or environment value is invalid."""


class ClosedError(ReverieError):
    """The runtime, namespace or session is not open."""


class StoreError(ReverieError):
    """The database failed; the transaction was rolled back, nothing was written."""


class StoreBusy(StoreError):
    """The database stayed locked longer than the busy timeout."""


class ToolInputError(ReverieError):
    """A tool call was malformed; the message is what the agent is told."""


@contextmanager
def map_store_errors() -> Iterator[None]:
    """Translate sqlite3 errors raised inside the block into reverie's tree."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        text = str(exc)
        if "locked" in text or "busy" in text:
            raise StoreBusy(f"database is busy: {text}") from exc
        raise StoreError(f"database error: {text}") from exc
    except sqlite3.Error as exc:
        raise StoreError(f"database error: {exc}") from exc
