"""reverie's one exception tree; no raw sqlite3, httpx or builtin error crosses the public API.

ReverieError
├── ConfigError          a bad setting, file or environment value
├── ClosedError          the runtime is not open (or was closed) for this call
├── StoreError           the database failed
│   ├── StoreBusy        the database stayed locked past the busy timeout
│   └── HomeError        no home there (read-only use), or a damaged one: refused
├── InputError           an argument of a public call was rejected (names the field)
│   ├── ToolInputError   a tool call's arguments were rejected (surfaced as decision ERROR)
│   └── NamespaceArchived a write to an archived namespace (restore it first)
├── TimeoutError         no answer within the time budget (says whether the work may land)
└── InternalError        an unexpected failure inside reverie (a bug); its type is named

Every message that quotes an input quotes at most :data:`QUOTE_CHARS` characters of it,
through :func:`quoted`, so a hostile 5 MB argument never becomes a 5 MB error.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import reprlib
import sqlite3
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, Final, ParamSpec, TypeVar

C = TypeVar("C", bound=type)
P = ParamSpec("P")
R = TypeVar("R")

QUOTE_CHARS: Final = 200  # at most this many characters of any input appear in a message
MESSAGE_CHARS: Final = 1_000  # an error message (or span status) is cut to this length


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


class HomeError(StoreError):
    """No home at that path (where one must exist), or its database holds less than its
    files show (empty, missing, reduced): refused, never opened as new, nothing written."""


class InputError(ReverieError):
    """An argument of a public call was rejected before anything was written."""


class ToolInputError(InputError):
    """A tool call was malformed; the message is what the agent is told."""


class NamespaceArchived(InputError):
    """The namespace is archived: it is read-only until ``Reverie.restore_namespace``."""


class TimeoutError(ReverieError):  # reverie.TimeoutError; the builtin is never raised
    """No answer within the time budget. ``withdrawn`` is True when the work was never
    started and never will be (nothing was written); False when it may still land."""

    def __init__(self, message: str, *, withdrawn: bool = False) -> None:
        super().__init__(message)
        self.withdrawn = withdrawn


class InternalError(ReverieError):
    """An unexpected failure inside reverie (a bug, or a broken invariant); never the
    caller's fault. The original exception is its ``__cause__``."""


_REPR = reprlib.Repr()
_REPR.maxstring = QUOTE_CHARS
_REPR.maxother = QUOTE_CHARS
_REPR.maxlevel = 3


def quoted(value: object, limit: int = QUOTE_CHARS) -> str:
    """``value`` as an error message may show it: its repr, with at most ``limit`` characters
    of the input and the full length named when cut."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}… ({len(value):,} chars)"
    text = _REPR.repr(value)
    return text if len(text) <= limit + 2 else f"{text[:limit]}…"


def bounded(message: str, limit: int = MESSAGE_CHARS) -> str:
    """A message cut to ``limit`` characters (span status, logs): the last line of defence
    when a message was built from something other than :func:`quoted`."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}… ({len(message):,} chars)"


def check_text(field: str, value: str, error: type[InputError] = InputError) -> None:
    """Refuse text SQLite cannot store (lone surrogates, as from a bad decode), naming the
    field, before anything is written."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise error(
            f"{field} is not valid Unicode (a lone surrogate {value[exc.start]!r} at "
            f"position {exc.start}); decode the text properly and retry"
        ) from exc


def as_reverie_error(exc: BaseException) -> ReverieError:
    """The public error for any exception (a ReverieError passes through unchanged); the
    original is kept as its ``__cause__``."""
    if isinstance(exc, ReverieError):
        return exc
    mapped = _mapped_error(exc)
    mapped.__cause__ = exc
    return mapped


def _mapped_error(exc: BaseException) -> ReverieError:
    if isinstance(exc, builtins.TimeoutError):
        return TimeoutError("no answer within the time budget; the work may still be applied")
    if isinstance(exc, UnicodeError):
        return InputError(f"text is not valid Unicode: {bounded(str(exc), QUOTE_CHARS)}")
    if isinstance(exc, sqlite3.Error | OSError):
        return StoreError(f"storage error: {bounded(str(exc), QUOTE_CHARS)}")
    return InternalError(f"internal error ({type(exc).__name__}: {bounded(str(exc), QUOTE_CHARS)})")


@contextmanager
def map_errors() -> Iterator[None]:
    """Re-raise any non-reverie exception of the block as a ReverieError (cancellation and
    other BaseExceptions pass untouched)."""
    try:
        yield
    except ReverieError:
        raise
    except Exception as exc:
        raise as_reverie_error(exc) from exc


def public_errors(cls: C) -> C:
    """Wrap every public coroutine of a class (and ``__aenter__`` / ``__aexit__``) in
    :func:`map_errors`, so a coroutine added later is covered without anyone remembering to."""
    for name, member in list(vars(cls).items()):
        public = not name.startswith("_") or name in {"__aenter__", "__aexit__"}
        if public and inspect.iscoroutinefunction(member):
            setattr(cls, name, _mapped(member))
    return cls


def _mapped(function: Callable[P, Awaitable[R]]) -> Callable[P, Coroutine[Any, Any, R]]:
    @functools.wraps(function)
    async def mapped(*args: P.args, **kwargs: P.kwargs) -> R:
        with map_errors():
            return await function(*args, **kwargs)

    return mapped


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
    except UnicodeEncodeError as exc:  # text with lone surrogates reached SQLite
        raise InputError(  # read or write: the statement never ran, so nothing changed
            f"text is not valid Unicode (a lone surrogate at position {exc.start}); the "
            "database can neither store nor look it up — decode the text properly and retry"
        ) from exc
