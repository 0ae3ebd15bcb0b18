"""One exception tree: every public coroutine of Reverie, Namespace and Session, driven into
each failure that can be caused for real, raises only ReverieError subclasses (F5c)."""

from __future__ import annotations

import inspect
import shutil
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

import reverie
from reverie import Config, ManualClock
from reverie.errors import MESSAGE_CHARS, QUOTE_CHARS, as_reverie_error, bounded, quoted
from reverie.stores import topics
from tests.conftest import ok

CLASSES = (reverie.Reverie, reverie.Namespace, reverie.Session)
GUARD_S = 60  # a hung call fails the test instead of hanging it (not a timed assertion)


def public_coroutines() -> list[tuple[type, str]]:
    """Every public coroutine of the facade, found by introspection, so one added later is
    driven too."""
    return [
        (cls, name)
        for cls in CLASSES
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_") and inspect.iscoroutinefunction(member)
    ]


# arguments that reach past validation, where a generic value would stop at it
REALISTIC: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "call_tool": (
        ("topic", {"action": "save", "topic": "deploy", "content": "The port is 81"}),
        {},
    ),
    "turn": ((), {"user": "We moved the build to make ci-all", "assistant": "Noted."}),
    "search": (("port",), {}),
    "pin_skill": (("release",), {}),
    "restore_skill": (("release",), {}),
    "used_skill": (("release",), {}),
    "review": ((), {"force": True}),
    "curate": ((), {"apply": True}),
}


def generic(annotation: object) -> Any:
    text = str(annotation)
    if "bool" in text:
        return True
    if "int" in text:
        return 1
    return "x"


def arguments(
    cls: type, name: str, extra: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if name in extra:
        return extra[name]
    if name in REALISTIC:
        return REALISTIC[name]
    params = list(inspect.signature(getattr(cls, name)).parameters.values())[1:]
    required = [
        p
        for p in params
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return tuple(generic(p.annotation) for p in required), {}


async def prepare(home: Path) -> dict[str, Any]:
    """A home with something to act on: a corrected fact (restorable), an entry, a skill."""
    async with reverie.open(home, clock=ManualClock(datetime(2026, 1, 1, tzinfo=UTC))) as rv:
        ns = rv.namespace()
        async with ns.session("setup") as s:
            first = ok(
                await s.call_tool(
                    "topic", {"action": "save", "topic": "deploy", "content": "The port is 80"}
                ),
                "ADD",
            )
            ok(
                await s.call_tool(
                    "topic", {"action": "save", "topic": "deploy", "content": "The port is 8080"}
                ),
                "SUPERSEDE",
            )
            ok(
                await s.call_tool(
                    "skill_manage",
                    {"action": "create", "name": "release", "content": "Tag, build, publish."},
                ),
                "CREATED",
            )
            await s.turn(user="The staging host is stage-2")
        await rv.wait_idle()
    return {"restore": ((first["entry_id"],), {}), "chain": ((first["entry_id"],), {})}


async def drive(
    rv: reverie.Reverie, s: reverie.Session, extra: dict[str, Any], failure: str
) -> list[str]:
    """Call every public coroutine; return what each did, failing on any non-reverie error."""
    targets = {reverie.Reverie: rv, reverie.Namespace: s.namespace, reverie.Session: s}
    seen = []
    for cls, name in public_coroutines():
        args, kwargs = arguments(cls, name, extra)
        try:
            with anyio.fail_after(GUARD_S):
                await getattr(targets[cls], name)(*args, **kwargs)
            seen.append(f"{name}: ok")
        except reverie.ReverieError as exc:
            seen.append(f"{name}: {type(exc).__name__}")
        except Exception as exc:  # the defect: a builtin escaping the public API
            pytest.fail(f"{failure}: {cls.__name__}.{name} raised {type(exc).__name__}: {exc!r}")
    return seen


def holding_write_lock(home: Path) -> sqlite3.Connection:
    """Another process's writer, in effect: a connection holding SQLite's write lock."""
    conn = sqlite3.connect(home / "reverie.db", isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    return conn


Scenario = Callable[[Path], AbstractAsyncContextManager[tuple[reverie.Reverie, reverie.Session]]]


@asynccontextmanager
async def opened(
    home: Path, config: Config | None = None
) -> AsyncIterator[tuple[reverie.Reverie, reverie.Session]]:
    clock = ManualClock(datetime(2026, 2, 1, tzinfo=UTC))
    async with reverie.open(home, config=config, clock=clock) as rv:
        async with rv.namespace().session("s") as s:
            yield rv, s


@asynccontextmanager
async def closed(home: Path) -> AsyncIterator[tuple[reverie.Reverie, reverie.Session]]:
    async with opened(home) as (rv, s):
        pass
    yield rv, s


@asynccontextmanager
async def locked(home: Path) -> AsyncIterator[tuple[reverie.Reverie, reverie.Session]]:
    config = Config().with_section("store", busy_timeout_ms=50)
    async with opened(home, config) as pair:
        lock = holding_write_lock(home)
        try:
            yield pair
        finally:
            lock.rollback()
            lock.close()


@asynccontextmanager
async def ask_timeout(home: Path) -> AsyncIterator[tuple[reverie.Reverie, reverie.Session]]:
    """Every ask gives up long before the writer, waiting on a locked database, answers."""
    config = (
        Config()
        .with_section("actors", ask_timeout_s=0.01)
        .with_section("store", busy_timeout_ms=400)
        .with_section("reviewer", lease_s=0.01)
    )
    async with opened(home, config) as pair:
        lock = holding_write_lock(home)
        try:
            yield pair
        finally:
            lock.rollback()
            lock.close()


@asynccontextmanager
async def corrupted(home: Path) -> AsyncIterator[tuple[reverie.Reverie, reverie.Session]]:
    """The database file overwritten with garbage while the runtime has it open."""
    async with opened(home) as pair:
        with (home / "reverie.db").open("r+b") as raw:
            size = raw.seek(0, 2)
            raw.seek(0)
            raw.write(b"\xde\xad\xbe\xef" * (size // 4))
        for wal in home.glob("reverie.db-wal"):
            wal.write_bytes(b"")
        yield pair


@asynccontextmanager
async def removed(home: Path) -> AsyncIterator[tuple[reverie.Reverie, reverie.Session]]:
    """The whole home removed from under the runtime (database and projections)."""
    async with opened(home) as pair:
        shutil.rmtree(home)
        yield pair


@asynccontextmanager
async def damaged_chain(home: Path) -> AsyncIterator[tuple[reverie.Reverie, reverie.Session]]:
    """Rows another writer left inconsistent: a chain with no live value (restore used to
    raise a bare RuntimeError / StopIteration here)."""
    with sqlite3.connect(home / "reverie.db") as conn:
        conn.execute(
            "UPDATE facts SET invalid_at = '2026-01-01T00:00:00+00:00', superseded_by = 'fct-gone'"
            " WHERE invalid_at IS NULL"
        )
    async with opened(home) as pair:
        yield pair


SCENARIOS: dict[str, Scenario] = {
    "closed": closed,
    "locked": locked,
    "ask_timeout": ask_timeout,
    "corrupted": corrupted,
    "removed": removed,
    "damaged_chain": damaged_chain,
}


def test_introspection_finds_the_contract() -> None:
    found = {f"{cls.__name__}.{name}" for cls, name in public_coroutines()}
    for name in (
        "Reverie.review",
        "Reverie.wait_idle",
        "Namespace.search",
        "Namespace.restore",
        "Namespace.call_result",
        "Session.call_tool",
        "Session.turn",
        "Session.pre_compact",
    ):
        assert name in found


@pytest.mark.parametrize("failure", sorted(SCENARIOS))
async def test_every_public_coroutine_raises_only_reverie_errors(
    tmp_path: Path, failure: str
) -> None:
    home = tmp_path / "home"
    extra = await prepare(home)
    try:
        async with SCENARIOS[failure](home) as (rv, s):
            seen = await drive(rv, s, extra, failure)
    except reverie.ReverieError:
        pass  # closing a runtime whose database was destroyed may report it, as a ReverieError
    assert len(seen) == len(public_coroutines())
    if failure == "closed":
        assert all(line.endswith(("ClosedError", ": ok")) for line in seen), seen
    if failure == "damaged_chain":
        assert "restore: ok" in seen  # an ERROR answer naming the damaged chain


HOSTILE: list[Any] = [None, -1, ["list"], {"a": 1}, "caf\udce9", "x" * 5_000_000, float("nan")]


@pytest.mark.parametrize("value", HOSTILE, ids=lambda v: type(v).__name__ + str(len(repr(v))))
async def test_bad_arguments_raise_only_reverie_errors(tmp_path: Path, value: Any) -> None:
    """Each parameter of each public coroutine, in turn, given a hostile value."""
    home = tmp_path / "home"
    extra = await prepare(home)
    async with opened(home) as (rv, s):
        targets = {reverie.Reverie: rv, reverie.Namespace: s.namespace, reverie.Session: s}
        for cls, name in public_coroutines():
            signature = inspect.signature(getattr(cls, name))
            args, kwargs = arguments(cls, name, extra)
            base = signature.bind_partial(None, *args, **kwargs).arguments
            for param in list(signature.parameters)[1:]:
                call = {**{k: v for k, v in base.items() if k != "self"}, param: value}
                answer: Any = None
                try:
                    with anyio.fail_after(GUARD_S):
                        answer = await getattr(targets[cls], name)(**call)
                except reverie.ReverieError as exc:
                    assert len(str(exc)) < 2 * MESSAGE_CHARS, (name, param)
                except Exception as exc:
                    pytest.fail(f"{cls.__name__}.{name}({param}=…) raised {exc!r:.300}")
                if isinstance(answer, dict) and "error" in answer:  # an ERROR answer, bounded
                    assert len(str(answer["error"])) < 2 * MESSAGE_CHARS, (name, param)


def test_quoted_cuts_inputs_to_the_bound() -> None:
    assert quoted("short") == "'short'"
    long = quoted("y" * 5_000_000)
    assert long.startswith("'" + "y" * QUOTE_CHARS + "'") and "5,000,000 chars" in long
    assert len(long) < QUOTE_CHARS + 40
    assert len(quoted(list(range(1_000_000)))) <= QUOTE_CHARS + 1
    assert QUOTE_CHARS == 200 and MESSAGE_CHARS == 1_000  # the documented bounds
    assert len(bounded("z" * 10_000)) < MESSAGE_CHARS + 30


def test_builtins_map_into_the_tree() -> None:
    assert isinstance(as_reverie_error(TimeoutError()), reverie.TimeoutError)
    assert isinstance(as_reverie_error(RuntimeError("x" * 10_000)), reverie.InternalError)
    assert len(str(as_reverie_error(RuntimeError("x" * 10_000)))) < 2 * QUOTE_CHARS
    assert isinstance(
        as_reverie_error(sqlite3.OperationalError("disk I/O error")), reverie.StoreError
    )
    assert isinstance(
        as_reverie_error(UnicodeEncodeError("utf-8", "\udce9", 0, 1, "x")), reverie.InputError
    )
    assert issubclass(reverie.ToolInputError, reverie.InputError)
    assert issubclass(reverie.TimeoutError, reverie.ReverieError)


async def test_a_lost_supersede_race_is_a_store_error(tmp_path: Path) -> None:
    """F5c: ``topics.invalidate`` raised a bare RuntimeError when the fact it stamps was no
    longer live (another writer got there first); now a StoreError the writer reports."""
    home = tmp_path / "home"
    extra = await prepare(home)
    [first] = extra["restore"][0]
    with sqlite3.connect(home / "reverie.db") as conn, pytest.raises(reverie.StoreError):
        topics.invalidate(conn, first, "fct-other", "2026-01-02T00:00:00+00:00")
