"""The database: one aiosqlite connection in WAL mode, migrations, and serialised transactions.

One connection carries every statement of this process, so an ``anyio.Lock`` makes each
transaction (and each read) whole: statements of two tasks never interleave. Across
processes, ``BEGIN IMMEDIATE`` takes SQLite's write lock up front and the busy timeout
waits for it, so a check-then-insert inside one transaction cannot race.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite
import anyio

from reverie.config import StoreConfig
from reverie.errors import ClosedError, StoreError, map_store_errors
from reverie.stores.schema import MIGRATIONS

Row = sqlite3.Row


class Database:
    """reverie.db: the source of truth for one home."""

    def __init__(self, path: Path, connection: aiosqlite.Connection) -> None:
        self.path = path
        self._conn: aiosqlite.Connection | None = connection
        self._lock = anyio.Lock()

    @classmethod
    async def open(cls, path: Path, settings: StoreConfig) -> Database:
        path.parent.mkdir(parents=True, exist_ok=True)
        with map_store_errors():
            conn = await aiosqlite.connect(
                path, isolation_level=None, timeout=settings.busy_timeout_ms / 1000
            )
            try:
                conn.row_factory = sqlite3.Row
                await conn.execute(f"PRAGMA busy_timeout = {int(settings.busy_timeout_ms)}")
                await conn.execute("PRAGMA journal_mode = WAL")
                await conn.execute(f"PRAGMA synchronous = {settings.synchronous.upper()}")
                await conn.execute("PRAGMA foreign_keys = ON")
                db = cls(path, conn)
                await db._migrate()
            except BaseException:
                await conn.close()
                raise
        return db

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with anyio.CancelScope(shield=True), map_store_errors():
                async with self._lock:
                    await conn.close()

    @property
    def conn(self) -> aiosqlite.Connection:
        if self._conn is None:
            raise ClosedError("the database is closed")
        return self._conn

    async def _migrate(self) -> None:
        async with self.transaction() as conn:
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"
            )
            row = await fetchone(conn, "SELECT max(version) FROM schema_version")
            current = (row[0] if row else None) or 0
            if current > len(MIGRATIONS):
                raise StoreError(
                    f"{self.path} has schema version {current}, newer than this reverie "
                    f"({len(MIGRATIONS)}); upgrade reverie"
                )
            for version, script in enumerate(MIGRATIONS[current:], start=current + 1):
                for statement in _statements(script):
                    await conn.execute(statement)
                await conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """A write transaction: BEGIN IMMEDIATE … COMMIT, rolled back on any error."""
        async with self._lock:
            conn = self.conn
            with map_store_errors():
                await conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                    with anyio.CancelScope(shield=True):
                        await conn.execute("COMMIT")
                except BaseException:
                    with anyio.CancelScope(shield=True):
                        if conn.in_transaction:
                            await conn.execute("ROLLBACK")
                    raise

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[aiosqlite.Connection]:
        """Reads that must not interleave with another task's open transaction."""
        async with self._lock:
            with map_store_errors():
                yield self.conn


async def fetchall(
    conn: aiosqlite.Connection, sql: str, params: tuple[Any, ...] | list[Any] = ()
) -> list[sqlite3.Row]:
    """One query, one hop to the connection's thread (execute + fetch + close together)."""
    return list(await conn.execute_fetchall(sql, params))


async def fetchone(
    conn: aiosqlite.Connection, sql: str, params: tuple[Any, ...] | list[Any] = ()
) -> sqlite3.Row | None:
    rows = await fetchall(conn, sql, params)
    return rows[0] if rows else None


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
