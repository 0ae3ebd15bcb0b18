"""The database: reverie.db in WAL mode, its migrations, and transactions run whole in a
worker thread.

A write is one function run inside ``BEGIN IMMEDIATE … COMMIT`` on the write connection,
in one hop to a worker thread: its checks and inserts are a handful of statements, and
paying a thread hop per statement (aiosqlite's model) cost 2–3x the write throughput
(see BENCHMARKS.md). Writes that queue up behind a commit are committed together, each in
its own savepoint (group commit). Writes of this process are serialised by a lock; across processes,
``BEGIN IMMEDIATE`` takes SQLite's write lock up front, so a check-then-insert inside one
transaction cannot race, and writers wait for it in a queue on ``reverie.db.lock``
(:mod:`reverie.stores.turns`: close to arrival order, bounded by the busy timeout). Reads
use a second connection and a read transaction, so they see one consistent committed state
and never wait for a write (nor for a turn).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar, cast

import anyio
import anyio.to_thread

from reverie.config import StoreConfig
from reverie.errors import ClosedError, HomeError, StoreError, map_store_errors
from reverie.stores.schema import MIGRATIONS
from reverie.stores.turns import Turns

T = TypeVar("T")
Row = sqlite3.Row
MAX_GROUP = 64  # writes committed together (or reads sharing a snapshot) at most


class Database:
    """reverie.db: the source of truth for one home."""

    def __init__(
        self,
        path: Path,
        writer: sqlite3.Connection,
        reader: sqlite3.Connection,
        turns: Turns | None = None,
    ) -> None:
        self.path = path
        self._turns = turns
        self._writer: sqlite3.Connection | None = writer
        self._reader: sqlite3.Connection | None = reader
        self._write_lock = anyio.Lock()
        self._queue: list[_Job] = []
        self._read_lock = anyio.Lock()
        self._reads: list[_Job] = []

    @classmethod
    async def open(
        cls,
        path: Path,
        settings: StoreConfig,
        refuse_new: Callable[[], str | None] | None = None,
    ) -> Database:
        """Open (or create) the database at ``path``. When it holds no schema yet (missing,
        0 bytes, or empty), ``refuse_new`` may name a reason not to create one: then
        :class:`HomeError` is raised, nothing is created, and no descriptor stays open."""

        turns = _turns(path, settings)

        def connect() -> tuple[sqlite3.Connection, sqlite3.Connection]:
            if refuse_new is not None and _absent(path):
                _refuse(refuse_new)
            path.parent.mkdir(parents=True, exist_ok=True)
            with map_store_errors():
                writer = _connect(path, settings)
                try:
                    _transaction(writer, lambda conn: _migrate(conn, refuse_new), turns=turns)
                    reader = _connect(path, settings)
                except BaseException:
                    writer.close()
                    raise
                return writer, reader

        writer, reader = await anyio.to_thread.run_sync(connect)
        return cls(path, writer, reader, turns)

    async def close(self) -> None:
        with anyio.CancelScope(shield=True):
            async with self._write_lock, self._read_lock:
                for conn in (self._writer, self._reader):
                    if conn is not None:
                        await anyio.to_thread.run_sync(conn.close)
                self._writer = self._reader = None

    async def write(
        self,
        body: Callable[[sqlite3.Connection], T],
        then: Callable[[sqlite3.Connection, T], None] | None = None,
    ) -> T:
        """Run ``body`` as one write: any error it raises rolls back its changes alone.
        ``then`` runs after the commit in the same thread (projections), still in this
        process's write order; it must not raise.

        Writes that queue up while another commits are committed together (group commit):
        one ``BEGIN IMMEDIATE … COMMIT`` and one fsync for the group, each write in its own
        savepoint, so a write that fails (a refused call, a broken body) leaves the others
        whole, and a commit that fails fails them all — none is acknowledged before its
        commit. Once started, a write is shielded from cancellation: it finishes and its
        result is returned, so a committed write is never reported as lost; a cancellation
        or time budget only takes effect while the write is still waiting for its turn."""
        job = _Job(body, then)
        await self._queued(job, self._queue, self._write_lock, self._commit_group)
        return cast(T, job.result)

    async def read(self, body: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``body`` in a read transaction: a consistent committed snapshot, begun after
        the read was asked for (so it sees every write acknowledged before). Reads that
        queue up while another runs share one snapshot and one hop to the worker thread
        (group read); an error in one is that read's alone."""
        job = _Job(body, None)
        await self._queued(job, self._reads, self._read_lock, self._read_group)
        return cast(T, job.result)

    async def _queued(
        self,
        job: _Job,
        queue: list[_Job],
        lock: anyio.Lock,
        run_group: Callable[[], Awaitable[None]],
    ) -> None:
        """Queue ``job`` and return once it ran (its error raised): whoever holds ``lock``
        next runs the queue's head as one group. Shielded once started; a cancellation
        while still queued takes it out."""
        queue.append(job)
        try:
            while not job.started:
                async with lock:
                    if not job.started:
                        await run_group()
        except BaseException:
            if not job.started:
                queue.remove(job)  # cancelled while waiting: it never runs
            raise
        # a job run by another task's group finished before that task let the lock go
        assert job.finished
        if job.error is not None:
            raise job.error

    async def _commit_group(self) -> None:
        await self._run_group(self._queue, self._writer, partial(_in_group, self._turns))

    async def _read_group(self) -> None:
        await self._run_group(self._reads, self._reader, _read_group)

    async def _run_group(
        self,
        queue: list[_Job],
        conn: sqlite3.Connection | None,
        run: Callable[[sqlite3.Connection, list[_Job]], None],
    ) -> None:
        group = queue[:MAX_GROUP]
        del queue[: len(group)]
        for job in group:
            job.started = True
        with anyio.CancelScope(shield=True):
            try:
                await anyio.to_thread.run_sync(run, self._open(conn), group)
            except BaseException as exc:
                for job in group:
                    job.error = job.error or exc
            finally:
                for job in group:
                    job.finished = True

    @staticmethod
    def _open(conn: sqlite3.Connection | None) -> sqlite3.Connection:
        if conn is None:
            raise ClosedError("the database is closed")
        return conn


def connect_migrated(path: Path, settings: StoreConfig) -> sqlite3.Connection:
    """A write connection to the migrated database at ``path``, for maintenance outside a
    runtime (``reverie doctor --repair``); the caller closes it."""
    conn = _connect(path, settings)
    try:
        _transaction(conn, _migrate)
    except BaseException:
        conn.close()
        raise
    return conn


def transaction(conn: sqlite3.Connection, body: Callable[[sqlite3.Connection], T]) -> T:
    """``body`` run whole in ``BEGIN IMMEDIATE … COMMIT`` on ``conn`` (maintenance)."""
    return _transaction(conn, body)


def _connect(path: Path, settings: StoreConfig) -> sqlite3.Connection:
    """A configured connection; closed again if configuring it fails (a read-only home,
    a file that is not a database), so a failed open leaves no descriptor behind."""
    conn = sqlite3.connect(
        path,
        isolation_level=None,
        check_same_thread=False,
        timeout=settings.busy_timeout_ms / 1000,
    )
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(settings.busy_timeout_ms)}")
        _to_wal(conn, settings.busy_timeout_ms / 1000)
        conn.execute(f"PRAGMA synchronous = {settings.synchronous.upper()}")
        conn.execute("PRAGMA foreign_keys = ON")
    except BaseException:
        conn.close()
        raise
    return conn


def _to_wal(conn: sqlite3.Connection, patience_s: float) -> None:
    """Switch to WAL. Another process creating the same new home holds a lock that SQLite
    reports at once, without its busy handler ("database is locked"), so the switch is
    tried again, with a growing pause, for as long as the busy timeout allows."""
    deadline = time.monotonic() + patience_s
    pause = 0.01
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            busy = "locked" in str(exc) or "busy" in str(exc)
            if not busy or time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)  # a worker thread: the event loop is not held
            pause = min(pause * 2, 0.5)


def _turns(path: Path, settings: StoreConfig) -> Turns | None:
    """The home's writers' queue, unless ``fair_wait`` is off (SQLite's backoff alone)."""
    if not settings.fair_wait:
        return None
    return Turns(path.with_name(path.name + ".lock"), settings.busy_timeout_ms)


def _in_turn(conn: sqlite3.Connection, turns: Turns | None, work: Callable[[], T]) -> T:
    """Run one ``BEGIN IMMEDIATE … COMMIT`` holding the home's write turn; SQLite's busy
    timeout gets what is left of the wait, so StoreBusy still comes after the timeout."""
    if turns is None:
        return work()
    started = time.monotonic()

    def turn(waited: bool) -> T:
        waited_ms = int((time.monotonic() - started) * 1000) if waited else 0
        if waited_ms == 0:
            return work()
        conn.execute(f"PRAGMA busy_timeout = {max(1, turns.timeout_ms - waited_ms)}")
        try:
            return work()
        finally:
            conn.execute(f"PRAGMA busy_timeout = {turns.timeout_ms}")

    return turns.run(turn)


def _absent(path: Path) -> bool:
    """No database there yet: no file, or an empty one (SQLite would make it new)."""
    try:
        return path.stat().st_size == 0
    except FileNotFoundError:
        return True


def _refuse(refuse_new: Callable[[], str | None]) -> None:
    reason = refuse_new()
    if reason is not None:
        raise HomeError(reason)


def _transaction(
    conn: sqlite3.Connection,
    body: Callable[[sqlite3.Connection], T],
    then: Callable[[sqlite3.Connection, T], None] | None = None,
    turns: Turns | None = None,
) -> T:
    def whole() -> T:
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = body(conn)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return result

    with map_store_errors():
        result = _in_turn(conn, turns, whole)
    if then is not None:
        then(conn, result)
    return result


@dataclass(eq=False)
class _Job:
    """One queued write (or read) and, once run, its result or error."""

    body: Callable[[sqlite3.Connection], Any]
    then: Callable[[sqlite3.Connection, Any], None] | None
    started: bool = False
    finished: bool = False
    result: Any = None
    error: BaseException | None = None


def _in_group(turns: Turns | None, conn: sqlite3.Connection, group: list[_Job]) -> None:
    _group(conn, group, turns)


def _group(conn: sqlite3.Connection, group: list[_Job], turns: Turns | None) -> None:
    """Run queued writes in one transaction, each in a savepoint, then their projections.
    Raises (failing every write of the group) when the transaction itself is lost."""
    if len(group) == 1:  # alone: a plain transaction, no savepoint to pay for
        job = group[0]
        try:
            job.result = _transaction(conn, job.body, job.then, turns)
        except Exception as exc:
            job.error = exc
        return
    with map_store_errors():
        _in_turn(conn, turns, lambda: _savepoints(conn, group))
    for job in group:
        if job.error is None and job.then is not None:
            try:
                job.then(conn, job.result)
            except Exception as exc:  # committed: the caller hears of it, the others do not
                job.error = exc


def _savepoints(conn: sqlite3.Connection, group: list[_Job]) -> None:
    """One transaction, each write of the group in its own savepoint."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for job in group:
            conn.execute("SAVEPOINT write")
            try:
                with map_store_errors():
                    job.result = job.body(conn)
            except Exception as exc:
                if not conn.in_transaction:
                    raise  # SQLite rolled the whole transaction back (disk full …)
                conn.execute("ROLLBACK TO write")
                job.error = exc
            conn.execute("RELEASE write")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _read_group(conn: sqlite3.Connection, group: list[_Job]) -> None:
    """Run queued reads in one read transaction; each read's error is its own."""
    with map_store_errors():
        conn.execute("BEGIN")
        try:
            for job in group:
                try:
                    with map_store_errors():
                        job.result = job.body(conn)
                except Exception as exc:
                    job.error = exc
        finally:
            conn.execute("COMMIT")


def _migrate(conn: sqlite3.Connection, refuse_new: Callable[[], str | None] | None = None) -> None:
    if refuse_new is not None and not fetchone(
        conn, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ):
        _refuse(refuse_new)  # a file with no schema: as new as an empty one
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = fetchone(conn, "SELECT max(version) FROM schema_version")
    current = (row[0] if row else None) or 0
    if current > len(MIGRATIONS):
        raise StoreError(
            f"the database has schema version {current}, newer than this reverie "
            f"({len(MIGRATIONS)}); upgrade reverie"
        )
    for version, script in enumerate(MIGRATIONS[current:], start=current + 1):
        for statement in _statements(script):
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))


def fetchall(
    conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] | list[Any] = ()
) -> list[sqlite3.Row]:
    return conn.execute(sql, params).fetchall()


def fetchone(
    conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] | list[Any] = ()
) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(sql, params).fetchone()
    return row


def _statements(script: str) -> list[str]:
    """Split a migration into whole statements (trigger bodies hold ';' of their own)."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        raise StoreError(f"incomplete statement in a migration: {buffer.strip()[:60]}")
    return statements
