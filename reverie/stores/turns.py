"""Writers' turns across processes: an exclusive ``flock`` on ``reverie.db.lock`` beside
the database, held from ``BEGIN IMMEDIATE`` to ``COMMIT``.

SQLite's busy handler polls with growing sleeps (up to 100 ms), so a writer that has waited
long sleeps longest and newcomers overtake it: at 8 processes × 8 sessions one call waited
18 s. A blocked ``flock`` is woken by the kernel when the lock is released, and Linux (5.0
and later) queues exclusive waiters behind one another, so writers are served close to
arrival order. The wait is bounded: a writer gives up after the busy timeout with
:class:`StoreBusy` and nothing written. It waits in a helper thread that keeps its place in
the kernel's queue, runs the transaction itself when the turn comes (one wake-up per
hand-over), and lets go at once if the writer gave up. Without ``fcntl`` (not POSIX), or
when the lock file cannot be opened (a read-only home), writes go without a turn and
SQLite's own waiting orders them; SQLite's lock is what excludes writers either way (so
``reverie doctor --repair``, which takes it without a turn, is still excluded).

Lock order: turn, then SQLite's write lock; both are released before the projections are
written under ``.projection.lock``, and nothing waits for a turn while holding that lock
(rebuild-on-open holds it in a read transaction), so the two file locks never deadlock.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from reverie.errors import StoreBusy

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: SQLite's own waiting only
    fcntl = None  # type: ignore[assignment]

T = TypeVar("T")


class Turns:
    """The queue of one home's writers, across processes."""

    def __init__(self, path: Path, timeout_ms: int) -> None:
        self.path = path
        self.timeout_ms = timeout_ms

    def run(self, work: Callable[[bool], T]) -> T:
        """``work(waited)`` run while holding the turn (``waited``: the turn was not free
        at once). Raises :class:`StoreBusy`, ``work`` never run, after the busy timeout."""
        fd = self._open()
        if fd is None:  # pragma: no cover - no lock to take: SQLite orders this write
            return work(False)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return _Waiter(fd, work).run(self.timeout_ms / 1000)
        except BaseException:
            os.close(fd)
            raise
        try:
            return work(False)
        finally:
            _release(fd)

    def _open(self) -> int | None:
        if fcntl is None:  # pragma: no cover
            return None
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            return None


def _release(fd: int) -> None:
    """Unlock, then close (a child forked meanwhile may share the open file)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


class _Waiter(Generic[T]):
    """A blocking ``flock`` in a helper thread that runs the work when its turn comes,
    unless the writer gave up first."""

    def __init__(self, fd: int, work: Callable[[bool], T]) -> None:
        self.fd = fd
        self.work = work
        self._mutex = threading.Lock()
        self._started = threading.Event()
        self._done = threading.Event()
        self._abandoned = False
        self._result: T | None = None
        self._error: BaseException | None = None

    def run(self, timeout_s: float) -> T:
        try:
            threading.Thread(target=self._block, name="reverie-turn", daemon=True).start()
        except RuntimeError:  # no thread to wait in (the process is out of them)
            os.close(self.fd)
            return self.work(False)  # SQLite's own waiting orders this write
        if not self._started.wait(timeout_s):
            with self._mutex:
                if not self._started.is_set():
                    self._abandoned = True  # the helper lets go of the turn when it comes
                    raise StoreBusy(
                        f"database is busy: no turn to write within {timeout_s:g} s "
                        "(other writers held it)"
                    )
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]

    def _block(self) -> None:
        locked = True
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except OSError:  # never seen on Linux: the work goes without a turn
            locked = False
        with self._mutex:
            if not self._abandoned:
                self._started.set()
        try:
            if self._started.is_set():
                self._result = self.work(True)
        except BaseException as exc:
            self._error = exc
        finally:
            if locked:
                _release(self.fd)
            else:
                os.close(self.fd)
            self._done.set()
