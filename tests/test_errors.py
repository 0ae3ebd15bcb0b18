"""One exception tree: every public coroutine of Reverie, Namespace and Session, driven into
each failure that can be caused for real, raises only ReverieError subclasses (F5c)."""

from __future__ import annotations

import inspect
import re
import shutil
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

import reverie
from reverie import Config, ManualClock, OfflineModel
from reverie.errors import MESSAGE_CHARS, QUOTE_CHARS, as_reverie_error, bounded, quoted
from reverie.model.seam import Answer, Prompt, Usage
from reverie.stores import topics
from tests.conftest import both_backends, ok, write_db

pytestmark = both_backends

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
    "unmerge_skill": (("deploy-a",), {}),  # merged by prepare()
    "unpatch_skill": (("backup",), {}),  # trimmed by prepare()
    "create_namespace": (("fresh",), {"settings": {"caps.memory": 500}}),
    "namespace_info": (("default",), {}),
    "archive_namespace": (("default",), {}),
    "restore_namespace": (("default",), {}),  # called after archive_namespace
    "set_namespace_settings": (("default", {"caps.memory": 2500}), {}),
    "import_records": ((Path(__file__).parent / "data" / "hermes",), {}),
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


SKILLS_TO_RESHAPE = {
    "deploy-a": "Deploy: run the tests, build the image, push it to staging.",
    "deploy-b": "Deploy: run the tests, build the image, push it to production.",
    "backup": "## Steps\n\n- Dump the database.\n\n## Steps\n\n- dump the database",
}


GAPS = (
    (
        "How do I rotate the TLS certificate on the staging proxy?",
        "Export the quarter's invoices to a spreadsheet.",
    ),
    (
        "The staging proxy TLS certificate expires, rotate it please.",
        "I need the invoices of this quarter as a spreadsheet.",
    ),
    (
        "Rotate the staging TLS certificate on the proxy again?",
        "Quarter invoices to a spreadsheet again, please.",
    ),
)
"""Two needs asked in three sessions each: the curator drafts both (accept and reject)."""


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
            for name, content in SKILLS_TO_RESHAPE.items():
                args = {"action": "create", "name": name, "content": content}
                ok(await s.call_tool("skill_manage", args), "CREATED")
        for i, (cert, invoice) in enumerate(GAPS):  # two gaps, each asked in three sessions
            async with ns.session(f"gap-{i}") as s:
                await s.turn(user=cert, assistant="Renew it with certbot, then reload nginx.")
                await s.turn(user=invoice, assistant="Open billing, filter the quarter, export.")
        await rv.wait_idle()
        ok(await ns.consolidate_skills(apply=True), "PATCHED")  # a merge to undo
        ok(await ns.patch_skills(apply=True), "PATCHED")  # a trim to undo
        await ns.review(force=True)  # the curator drafts the two gaps
        drafted = [d.name for d in await ns.skill_drafts()]
        assert len(drafted) == 2, drafted
        await ns.dream()  # a dream report to read
    fid = first["entry_id"]
    return {
        "accept_draft": ((drafted[0],), {}),
        "reject_draft": ((drafted[1],), {}),
        "restore": ((fid,), {}),
        "chain": ((fid,), {}),
        **{name: ((fid,), {}) for name in ("record", "access_history", "promote", "recall")},
        "set_tier": ((fid, "warm"), {}),
        "draw_learning_graph": ((home.parent / "learning-graph.svg",), {}),
    }


def outcome(answer: Any) -> str:
    """One call's outcome as a line: ``ok``, ``ERROR: <message>`` for an ERROR answer (or a
    report that did not run, with its reason), else the ReverieError's class name."""
    if isinstance(answer, dict) and answer.get("decision") == "ERROR":
        return f"ERROR: {answer.get('error')}"
    if isinstance(answer, dict) and answer.get("ran") is False and "reason" in answer:
        return f"ERROR: {answer['reason']}"
    return "ok"


async def drive(
    rv: reverie.Reverie, s: reverie.Session, extra: dict[str, Any], failure: str
) -> dict[str, str]:
    """Call every public coroutine; return ``Class.name`` → its outcome, failing on any
    error outside the tree."""
    targets = {reverie.Reverie: rv, reverie.Namespace: s.namespace, reverie.Session: s}
    seen: dict[str, str] = {}
    for cls, name in public_coroutines():
        args, kwargs = arguments(cls, name, extra)
        key = f"{cls.__name__}.{name}"
        try:
            with anyio.fail_after(GUARD_S):
                seen[key] = outcome(await getattr(targets[cls], name)(*args, **kwargs))
        except reverie.ReverieError as exc:
            seen[key] = type(exc).__name__
            if isinstance(exc, reverie.InternalError):
                seen[key] += f" ({exc})"
        except Exception as exc:  # the defect: a builtin escaping the public API
            pytest.fail(f"{failure}: {key} raised {type(exc).__name__}: {exc!r}")
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
    with write_db(home) as conn:
        conn.execute(
            "UPDATE facts SET invalid_at = '2026-01-01T00:00:00+00:00', superseded_by = 'fct-gone'"
            " WHERE invalid_at IS NULL"
        )
    async with opened(home) as pair:
        yield pair


@dataclass(frozen=True)
class Expected:
    """What a real failure maps to: the only classes a call may raise (InternalError never —
    it means a bug), words every ERROR answer carries, and calls that must show the failure
    (so a scenario that stopped causing it fails too)."""

    raises: frozenset[type[reverie.ReverieError]]
    says: tuple[str, ...] = ()
    witnesses: tuple[tuple[str, str], ...] = ()


EXPECTED: dict[str, Expected] = {
    "closed": Expected(
        frozenset({reverie.ClosedError}),
        ("closed",),
        (("Namespace.chain", "ClosedError"), ("Session.turn", "ClosedError")),
    ),
    "locked": Expected(
        frozenset({reverie.StoreBusy}),
        ("busy",),
        (
            ("Session.turn", "StoreBusy"),
            ("Session.call_tool", "ERROR: database is busy"),
            ("Session.pre_compact", "ok"),  # a stage: its failure never raises into the host
        ),
    ),
    "ask_timeout": Expected(
        frozenset({reverie.TimeoutError, reverie.StoreBusy}),
        ("no answer",),
        (("Session.turn", "TimeoutError"), ("Session.call_tool", "ERROR: writer gave no")),
    ),
    "corrupted": Expected(
        frozenset({reverie.StoreError, reverie.HomeError}),
        ("database",),
        (
            ("Namespace.chain", "StoreError"),
            ("Namespace.search", "StoreError"),
            ("Session.call_tool", "ERROR: database error"),
            ("Session.pre_compact", "ok"),
        ),
    ),
    "removed": Expected(  # open files outlive their names: the database still answers
        frozenset({reverie.StoreError}),
        ("no archived skill",),
        (("Namespace.chain", "ok"), ("Session.call_tool", "ok")),
    ),
    "damaged_chain": Expected(
        frozenset(),
        ("no live value", "no archived skill"),
        (("Namespace.restore", "ERROR: the chain of"), ("Namespace.chain", "ok")),
    ),
}
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
    assert set(EXPECTED) == set(SCENARIOS)


def misfits(seen: dict[str, str], expected: Expected) -> list[str]:
    """Every outcome that is not what this failure maps to."""
    allowed = {cls.__name__ for cls in expected.raises}
    wrong = []
    for key, line in seen.items():
        if line.startswith("ERROR: "):
            if "internal error" in line or not any(w in line for w in expected.says):
                wrong.append(f"{key}: {line[:200]}")
        elif line != "ok" and line not in allowed:  # InternalError is never allowed
            wrong.append(f"{key}: {line[:200]}")
    for key, start in expected.witnesses:
        if not seen.get(key, "").startswith(start):
            wrong.append(f"{key}: {seen.get(key)!r}, expected {start!r}")
    return wrong


@pytest.mark.parametrize("failure", sorted(SCENARIOS))
async def test_every_public_coroutine_raises_only_its_failures_class(
    tmp_path: Path, failure: str
) -> None:
    """Each real failure maps to its own class (closed → ClosedError, a held lock →
    StoreBusy, a late answer → TimeoutError, a destroyed file → StoreError), never to
    InternalError, which means a bug — so a crash can no longer pass for a mapped error."""
    home = tmp_path / "home"
    extra = await prepare(home)
    try:
        async with SCENARIOS[failure](home) as (rv, s):
            seen = await drive(rv, s, extra, failure)
    except reverie.ReverieError as exc:  # closing over a destroyed database may report it
        assert not isinstance(exc, reverie.InternalError), repr(exc)
    assert len(seen) == len(public_coroutines())
    assert misfits(seen, EXPECTED[failure]) == [], seen


HOSTILE: list[Any] = [None, -1, ["list"], {"a": 1}, "caf\udce9", "x" * 5_000_000, float("nan")]


async def hostile_outcome(target: Any, name: str, call: dict[str, Any]) -> str | None:
    """What one call with a hostile argument did wrong, or None: a refusal must be an
    InputError (or an ERROR answer) with a bounded message, never a crash."""
    answer: Any = None
    try:
        with anyio.fail_after(GUARD_S):
            answer = await getattr(target, name)(**call)
    except reverie.InputError as exc:
        return None if len(str(exc)) < 2 * MESSAGE_CHARS else f"unbounded: {len(str(exc))}"
    except Exception as exc:  # another ReverieError (InternalError above all) or a builtin
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    if isinstance(answer, dict) and "error" in answer:  # an ERROR answer, bounded
        message = str(answer["error"])
        if "internal error" in message or len(message) >= 2 * MESSAGE_CHARS:
            return f"ERROR answer: {message[:200]}"
    return None


@pytest.mark.parametrize("value", HOSTILE, ids=lambda v: type(v).__name__ + str(len(repr(v))))
async def test_bad_arguments_raise_only_input_errors(
    tmp_path: Path, value: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each parameter of each public coroutine, in turn, given a hostile value: an
    InputError or an ERROR answer, never InternalError (a bug) or a store error."""
    monkeypatch.chdir(tmp_path)  # a hostile path that is a fine file name lands here
    home = tmp_path / "home"
    extra = await prepare(home)
    wrong = []
    async with opened(home) as (rv, s):
        targets = {reverie.Reverie: rv, reverie.Namespace: s.namespace, reverie.Session: s}
        for cls, name in public_coroutines():
            signature = inspect.signature(getattr(cls, name))
            args, kwargs = arguments(cls, name, extra)
            base = signature.bind_partial(None, *args, **kwargs).arguments
            for param in list(signature.parameters)[1:]:
                call = {**{k: v for k, v in base.items() if k != "self"}, param: value}
                problem = await hostile_outcome(targets[cls], name, call)
                if problem is not None:
                    wrong.append(f"{cls.__name__}.{name}({param}=…): {problem}")
    assert wrong == [], "\n".join(wrong)


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
    with write_db(home) as conn, pytest.raises(reverie.StoreError):
        topics.invalidate(conn, first, "fct-other", "2026-01-02T00:00:00+00:00")


class _NaiveClock:
    """A clock telling naive local time: every stored timestamp would be ambiguous."""

    def now(self) -> datetime:
        return datetime(2026, 1, 1)  # naive: the defect under test


class _Unreadable:
    """A path-like whose path is not text (bytes): not a home reverie can name files in."""

    def __fspath__(self) -> bytes:
        return b"/tmp/x"


@pytest.mark.parametrize(
    ("arguments", "names"),
    [
        ({"home": None}, "home must be a path"),
        ({"home": 123}, "home must be a path"),
        ({"home": ""}, "home must name a directory"),
        ({"home": "  "}, "home must name a directory"),
        ({"home": "a\x00b"}, "home must not contain a NUL"),
        ({"home": _Unreadable()}, "home must be a str path"),
        ({"config": "x"}, "config must be a reverie.Config"),
        ({"config": {"store": {}}}, "config must be a reverie.Config"),
        ({"clock": 1}, "clock must be a reverie Clock"),
        ({"clock": _NaiveClock()}, "clock.now() must return an aware datetime"),
        ({"model": 1}, "model must be a reverie Model"),
        ({"model": OfflineModel}, "model must be a reverie Model"),  # the class, not one
        ({"embedder": 1}, "embedder must be a reverie Embedder"),
        ({"tracer_provider": "otel"}, "tracer_provider must be an OpenTelemetry"),
        ({"meter_provider": 1}, "meter_provider must be an OpenTelemetry"),
        ({"create": "no"}, "create must be True or False"),
    ],
    ids=lambda v: str(v)[:30],
)
async def test_open_refuses_bad_arguments_naming_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arguments: dict[str, Any], names: str
) -> None:
    """Finding 9: a bad argument of ``reverie.open`` is an InputError that names it and says
    what it must be (was: TypeError, AttributeError, InternalError, or accepted — and
    ``open('')`` silently made a home of the working directory)."""
    monkeypatch.chdir(tmp_path)
    call = {"home": tmp_path / "home", **arguments}
    home = call.pop("home")
    with pytest.raises(reverie.InputError, match=re.escape(names)):
        async with reverie.open(home, **call):
            pass
    assert list(tmp_path.iterdir()) == []  # nothing was created, in the home or the cwd


async def test_open_accepts_any_object_with_the_seams_members(tmp_path: Path) -> None:
    """The seams are Protocols: structural checks accept a host's own classes."""

    class Clock:
        def now(self) -> datetime:
            return datetime(2026, 3, 1, tzinfo=UTC)

    async with reverie.open(tmp_path / "home", clock=Clock(), model=OfflineModel()) as rv:
        async with rv.namespace().session("s") as s:
            saved = await s.call_tool("topic", {"action": "save", "topic": "a", "content": "x=1"})
            ok(saved, "ADD")


class _DictModel:
    """A host's Model whose judge answers with a bare dict instead of an Answer."""

    name = "dict-model"

    async def judge(self, prompt: Prompt) -> Any:
        return {"reasoning": "", "not": "an Answer"}


class _OffSchemaModel:
    """A host's Model whose Answer carries data outside the prompt's schema."""

    name = "off-schema"

    async def judge(self, prompt: Prompt) -> Answer:
        return Answer(data={"verdict": 42}, usage=Usage(calls=1), model=self.name)


@pytest.mark.parametrize("model", [_DictModel(), _OffSchemaModel()], ids=lambda m: m.name)
async def test_a_malformed_model_answer_never_raises_from_pre_compact(
    tmp_path: Path, model: Any
) -> None:
    """Finding 9: nothing a stage does raises into the host — a model answering the wrong
    type (was: InternalError from ``pre_compact``) is a deferred call, recorded in the
    ledger with its reason; the flush's candidates stay pending for a later flush."""
    async with reverie.open(tmp_path / "home", model=model) as rv:
        ns = rv.namespace()
        async with ns.session("s") as s:
            await s.turn(user="The deploys broke when the proxy cache was cold.")
            await s.turn(user="I learned that retries hide flaky tests.")
            assert await s.pre_compact() is None
        calls = [r for r in await ns.ledger() if r.action == "model_call"]
        assert calls and all(r.decision == "DEFERRED" for r in calls), calls
        reasons = " ".join(str(r.detail.get("reason")) for r in calls)
        assert "not an Answer" in reasons or "does not fit the schema" in reasons, reasons
        assert (await rv.model_calls())["flusher"]["deferred"] == len(calls)


async def test_entries_refuses_an_unknown_target_listing_the_valid_ones(tmp_path: Path) -> None:
    """Finding 9: ``ns.entries("bogus")`` returned [] as if the target were empty."""
    async with opened(tmp_path / "home") as (rv, s):
        with pytest.raises(reverie.InputError) as caught:
            await s.namespace.entries("bogus")
        for target in ("memory", "user", "soul"):
            assert target in str(caught.value)
        assert await s.namespace.entries("soul") == []


@pytest.mark.parametrize(
    ("method", "field"),
    [
        ("chain", "entry_id"),
        ("ledger", "entry_id"),
        ("facts", "topic"),
        ("entries", "target"),
        ("search", "query"),
    ],
)
async def test_a_lone_surrogate_in_a_read_names_the_argument(
    tmp_path: Path, method: str, field: str
) -> None:
    """Finding 9: a read given undecodable text names the argument, and does not claim
    "nothing was written" (it is a read)."""
    async with opened(tmp_path / "home") as (rv, s):
        with pytest.raises(reverie.InputError) as caught:
            await getattr(s.namespace, method)("caf\udce9")
    message = str(caught.value)
    assert message.startswith(f"{field} is not valid Unicode"), message
    assert "written" not in message
