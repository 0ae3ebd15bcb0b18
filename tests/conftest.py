from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import reverie
from bench._common import data_dir
from reverie import Config, ManualClock

BACKENDS = ("asyncio", "trio")
"""The anyio backends the core contract runs under (``both_backends`` below)."""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Every async test runs on anyio's pytest plugin; asyncio unless the module asks for
    both backends (``pytestmark = both_backends``) or ``REVERIE_TEST_BACKEND`` names one."""
    return os.environ.get("REVERIE_TEST_BACKEND", "asyncio")


both_backends = pytest.mark.both_backends
"""Put in a module's ``pytestmark`` (or on a test): its async tests run under asyncio and
under trio."""


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marked = metafunc.definition.get_closest_marker("both_backends") is not None
    if marked and "anyio_backend" in metafunc.fixturenames:
        metafunc.parametrize("anyio_backend", BACKENDS, scope="module")


asyncio_only = pytest.mark.parametrize("anyio_backend", ["asyncio"], scope="module")
"""For a test of what only asyncio allows (leaving the runtime from another task)."""


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 1, 1, tzinfo=UTC))


@pytest.fixture
def spans() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


@pytest.fixture
def config() -> Config:
    return Config()


@pytest.fixture
async def rv(tmp_path: Path, clock: ManualClock, config: Config) -> AsyncIterator[reverie.Reverie]:
    async with reverie.open(tmp_path / "home", config=config, clock=clock) as runtime:
        yield runtime


def review_stage(report: dict[str, Any], stage: str, namespace: int = 0) -> dict[str, Any]:
    """What one stage did in a ``rv.review()`` report (the first namespace by default)."""
    [found] = [s for s in report["namespaces"][namespace]["stages"] if s["stage"] == stage]
    return found  # type: ignore[no-any-return]


@pytest.fixture
def shared_data() -> Path:
    """The shared benchmark data directory (``bench._common.data_dir``: ``$REVERIE_DATA``,
    else ``<repo>/../shared/data``); the test is skipped when it is absent."""
    path = data_dir()
    if not path.is_dir():
        pytest.skip(f"shared benchmark data absent: {path} (set REVERIE_DATA to its directory)")
    return path


# ---- the database, read and written with plain sqlite3 (not through reverie) -------------
# Every connection is closed on the way out: ``with sqlite3.connect(...)`` only commits, and
# Python 3.13 reports the unclosed connection (a ResourceWarning, an error under pytest's
# ``filterwarnings = error``).


def database(home: Path) -> Path:
    """A home's database file (a path ending in ``.db`` is taken as the file itself)."""
    return home if home.suffix == ".db" else home / "reverie.db"


@contextmanager
def read_db(home: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to a home's database, closed on exit."""
    with closing(sqlite3.connect(f"file:{database(home)}?mode=ro", uri=True)) as conn:
        yield conn


@contextmanager
def write_db(home: Path) -> Iterator[sqlite3.Connection]:
    """A connection that commits on success (rolls back on an error), closed on exit: rows
    another writer, an old home or a damaged one could have left."""
    with closing(sqlite3.connect(database(home))) as conn, conn:
        yield conn


def rows(home: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Every row of a read-only query."""
    with read_db(home) as conn:
        return conn.execute(sql, params).fetchall()


def scalar(home: Path, sql: str, *params: Any) -> Any:
    """The first column of the first row of a read-only query."""
    with read_db(home) as conn:
        return conn.execute(sql, params).fetchone()[0]


def db_counts(home: Path) -> dict[str, int]:
    """Row counts of every table that a write could touch, read with plain sqlite3."""
    with read_db(home) as conn:
        counts = {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in (
                "entries",
                "topics",
                "facts",
                "skills",
                "ledger",
                "episodes",
                "search_index",
                "search_superseded",
            )
        }
        for name, sql in _DERIVED_COUNTS.items():
            counts[name] = conn.execute(sql).fetchone()[0]
        return counts


_DERIVED_COUNTS = {
    # the search rows of live facts, and of the former texts of live heads of chains
    "search_facts": "SELECT count(*) FROM search_index WHERE rowid % 4 = 1",
    "search_former": "SELECT count(*) FROM search_index WHERE rowid % 4 = 0",
    "corrected_heads": "SELECT count(*) FROM facts WHERE invalid_at IS NULL AND depth > 1",
}


def tree(home: Path) -> dict[str, bytes]:
    """Every projection file under a home, with its bytes."""
    return {
        str(p.relative_to(home)): p.read_bytes()
        for p in sorted(home.rglob("*"))
        if p.is_file() and not p.name.startswith("reverie.db") and p.name != ".projection.lock"
    }


def ok(result: dict[str, Any], decision: str) -> dict[str, Any]:
    assert result["decision"] == decision, result
    return result


async def added_apart(
    ns: reverie.Namespace, clock: ManualClock, days: int, *calls: tuple[str, dict[str, Any]]
) -> None:
    """Each (tool, args) call answered ADD, in one session, ``days`` apart: an older and a
    newer saying, for what search does with the two."""
    async with ns.session("s") as s:
        for i, (tool, args) in enumerate(calls):
            if i:
                clock.advance(timedelta(days=days))
            ok(await s.call_tool(tool, args), "ADD")
