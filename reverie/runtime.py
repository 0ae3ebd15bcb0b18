"""The facade hosts hold: ``Reverie`` (one home), ``Namespace`` and ``Session``.

``Reverie`` is an ``async with`` object that owns a task group in the host's event loop;
every actor runs inside it, so closing the runtime drains and then ends all of them.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from enum import Enum
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal, Self

import anyio
from anyio.abc import TaskGroup
from opentelemetry import metrics, trace
from opentelemetry.trace import Status, StatusCode

import reverie.errors as errors
import reverie.transfer as transfer
from reverie._http import Timeout
from reverie.actors.context import Clocked, Judge
from reverie.actors.curator import Curator
from reverie.actors.distiller import Distiller
from reverie.actors.dreamer import Dreamer
from reverie.actors.extractor import Extractor
from reverie.actors.flusher import Flusher
from reverie.actors.grapher import Grapher
from reverie.actors.judging import calls_per_stage
from reverie.actors.learner import AccessBook, Learner
from reverie.actors.linter import Linter
from reverie.actors.profiler import Profiler
from reverie.actors.promoter import Promoter
from reverie.actors.reviewer import NOTHING_NEW, Reviewer
from reverie.actors.skill_reshape import Reshaped
from reverie.actors.stage import Preview, Stage, preview
from reverie.actors.writer import Writer
from reverie.bus.actor import Actor
from reverie.bus.bus import ActorDisabled, Bus
from reverie.bus.messages import (
    AccessesDue,
    CallLookup,
    Curate,
    Dream,
    GraphDue,
    Learn,
    MoveRecord,
    PinSkill,
    PreCompact,
    RecordsDue,
    ReshapeSkills,
    Restore,
    ReviewDue,
    SessionEnded,
    SessionIdle,
    SkillUsed,
    ToolCall,
    TurnRecord,
    UndoReshape,
)
from reverie.clock import Clock, SystemClock
from reverie.commands import TopicCommand
from reverie.config import Config
from reverie.dream import report as dream_reports
from reverie.dream import status as dream_status
from reverie.embedding.index import VectorIndex, configured_embedder
from reverie.embedding.openai_compat import OpenAIEmbedder
from reverie.embedding.seam import Embedder
from reverie.errors import (
    ClosedError,
    ConfigError,
    InputError,
    NamespaceArchived,
    ReverieError,
    ToolInputError,
    bounded,
    check_text,
    public_errors,
    quoted,
)
from reverie.model.breaker import Breaker
from reverie.model.offline import OfflineModel
from reverie.model.openai_compat import OpenAICompatible
from reverie.model.seam import Model
from reverie.names import DATABASE_FILE, Names, check_name
from reverie.prefetch import Prefetch, Prefetcher
from reverie.reports import DreamDetails, NamespaceReport, RoundReport
from reverie.results import Decision, FactView, ToolResult, TopicListing, refused
from reverie.rules.query import PRIORITIES, TIERS, parse
from reverie.rules.secrets import refusal, secret_kind
from reverie.seams import check_plugged, home_path
from reverie.skills import drafts as skill_drafts
from reverie.skills import drawing
from reverie.skills.drafts import StaleSkill
from reverie.skills.picture import DEFAULT_MAX_NODES, LearningGraph, learning_graph
from reverie.snapshot import Snapshot, take
from reverie.stores import (
    calls,
    entries,
    episodes,
    learning,
    ledger,
    namespaces,
    rekey,
    review_state,
    skill_activity,
    skills,
    syntheses,
    topics,
)
from reverie.stores import drafts as drafts_store
from reverie.stores import dream as dream_store
from reverie.stores import graph as graph_store
from reverie.stores import patterns as pattern_store
from reverie.stores import search as search_store
from reverie.stores.db import Database
from reverie.stores.drafts import SkillDraft
from reverie.stores.learning import LearningRecord
from reverie.stores.patterns import Pattern
from reverie.stores.projection import Projector
from reverie.stores.records import Episode, Fact, LedgerRecord, SearchHit, SearchResults, Skill
from reverie.task_home import TaskHome
from reverie.telemetry import metrics as reverie_metrics
from reverie.telemetry.logs import debug_wanted, get_logger
from reverie.telemetry.tracing import agent_name, span_tool, tool_attributes, tracer
from reverie.tools import MEMORY_TARGETS, parse_call, schemas

log = get_logger("reverie.runtime")

DEFAULT_NAMESPACE = "default"
_MAX_TURN_CHARS = 100_000
_MAX_CALL_ID_CHARS = 200
_MAX_QUERY_CHARS = 4000
PREFETCH_SPAN: Final = "reverie.prefetch"


class State(Enum):
    NEW = "new"
    OPEN = "open"
    CLOSED = "closed"


def _check_name(kind: str, value: object) -> str:
    """A namespace becomes a folder beside reverie.db; a session id names no file."""
    return check_name(kind, value, home_level=kind == "namespace")


@public_errors
class Reverie:
    """One home: the database, the projections, the bus and its actors."""

    def __init__(
        self,
        home: str | Path,
        config: Config | None = None,
        model: Model | None = None,
        clock: Clock | None = None,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
        embedder: Embedder | None = None,
        create: bool = True,
        task_group: TaskGroup | None = None,
    ) -> None:
        self.home = home_path(home)
        check_plugged(
            {
                "config": config,
                "model": model,
                "clock": clock,
                "tracer_provider": tracer_provider,
                "meter_provider": meter_provider,
                "embedder": embedder,
                "create": create,
                "task_group": task_group,
            }
        )
        self._create = create  # False: a missing home is an error, never made (read-only use)
        self._names = Names()
        self.projection_failures: dict[str, str] = {}  # namespace → why its files are stale
        self.config = config or Config()
        self._own_model = model is None and bool(self.config.model.url)
        self.model: Model = model if model is not None else _configured_model(self.config)
        self._own_embedder = embedder is None
        self.embedder = embedder if embedder is not None else configured_embedder(self.config)
        self.vectors: VectorIndex | None = None
        self.clock: Clock = clock or SystemClock()
        self._tracer = tracer(tracer_provider)
        self._meter_provider = meter_provider
        self._state = State.NEW
        self._tg: TaskGroup | None = None
        self._home_of_tasks = TaskHome(task_group)
        self._stop: anyio.Event | None = None  # made in _start(), inside the host's loop
        self._services: Parts | None = None
        self.factories: dict[type[Actor], Callable[[str], Actor]] = {}
        """How each actor is made for a namespace, with only what it uses (see
        :func:`_wire`)."""

    # -- lifecycle ----------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        if self._state is not State.NEW:
            raise ClosedError("a Reverie runtime opens once; create a new one with reverie.open")
        try:
            db = await Database.open(self.home / DATABASE_FILE, self.config.store, self._refuse_new)
            try:
                await self._start(db)
            except BaseException:
                await self._abort_start(db)
                raise
            await self._rekey()
            await self._rebuild_projections()
        except BaseException as exc:  # a failed open closes everything it opened
            if self._services is not None:  # started: closing it closes everything
                await self.__aexit__(type(exc), exc, exc.__traceback__)
            else:
                self._state = State.CLOSED
                await self._close_clients()
            raise
        return self

    async def _start(self, db: Database) -> None:
        """The task group, the bus and its actors over an open database."""
        if self.embedder is not None:
            e = self.config.embedder
            self.vectors = VectorIndex(db, self.embedder, e.batch, e.search_budget_s, e.breaker_s)
        self._stop = anyio.Event()
        await self._home_of_tasks.start(self._own_task_group)
        assert self._tg is not None
        bus = Bus(self._tg, self.config.actors, self._tracer)
        judge = Judge(
            model=self.model,
            breaker=Breaker(self.config.model.breaker_s, self.config.model.concurrency),
            tracer=self._tracer,
            token_usage=reverie_metrics.token_usage(self._meter_provider),
            model_calls=reverie_metrics.model_calls(self._meter_provider),
            db=db,
            clock=self.clock,
        )
        book = AccessBook(self.config.records.access_batch)
        self._services = Parts(
            db, Projector(self.home), self.config, self.clock, bus, self._tracer, judge, book
        )
        self.factories = _wire(self._services, self.vectors)
        for actor in ACTORS:
            bus.subscribe(actor.name, actor.handles, self.factories[actor])
        self._state = State.OPEN

    async def _abort_start(self, db: Database) -> None:
        self._services = None
        with anyio.CancelScope(shield=True):
            if self._stop is not None:
                self._stop.set()
            await self._home_of_tasks.join()
            await db.close()
        await self._home_of_tasks.leave()

    def _refuse_new(self) -> str | None:
        """Why no new database may be made here (see ``Database.open``): a home whose
        database is missing or empty while its files exist would be wiped by it."""
        path = self.home / DATABASE_FILE
        held = Projector(self.home).projected()
        if held:
            state = "missing" if not path.exists() else "empty or without a schema"
            shown = ", ".join(held[:5]) + (f" and {len(held) - 5} more" if len(held) > 5 else "")
            return (
                f"{path} is {state} but the home holds the files of {len(held)} "
                f"namespace(s) ({shown}); refusing to open it as a new home, which would wipe "
                f"them. Run `reverie doctor --repair --home {self.home}` to rebuild the "
                "database from those files"
            )
        if not self._create:
            return f"no reverie home at {self.home} (no reverie.db there); nothing was created"
        return None

    async def _close_clients(self) -> None:
        with anyio.CancelScope(shield=True):
            if self._own_model and isinstance(self.model, OpenAICompatible):
                await self.model.aclose()
            if self._own_embedder and isinstance(self.embedder, OpenAIEmbedder):
                await self.embedder.aclose()

    async def _own_task_group(self, ready: anyio.Event) -> None:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            ready.set()
            assert self._stop is not None
            await self._stop.wait()
            tg.cancel_scope.cancel()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._state is not State.OPEN:
            return
        self._state = State.CLOSED
        services = self._services
        assert services is not None
        try:
            with anyio.CancelScope(shield=True):
                try:
                    await self._count_accesses(services)
                    await services.bus.close()
                finally:
                    assert self._stop is not None
                    self._stop.set()
                    await self._home_of_tasks.join()
                    await services.db.close()
                    await self._close_clients()
        finally:
            await self._home_of_tasks.leave()

    @staticmethod
    async def _count_accesses(services: Parts) -> None:
        """The reads' accesses still in memory, written in one transaction before the
        database closes (straight to the store: no actor is started while closing), by
        each namespace's own tier numbers; an archived namespace's are not counted."""

        def counter(name: str, taken: list[tuple[str, str, str]]) -> Callable[..., Any]:
            def write(conn: sqlite3.Connection) -> Any:
                settings = namespaces.open_settings(conn, name, services.config)
                if settings is None:  # archived: its reads are not counted
                    return []
                return learning.touch(conn, name, taken, settings.records)

            return write

        for name in services.book.waiting():
            try:
                await services.db.write(counter(name, services.book.take(name)))
            except ReverieError as exc:  # a full disk or a locked store: only delays a move
                log.debug("accesses_not_counted", namespace=name, error=repr(exc))

    async def _rekey(self) -> None:
        """Stored rule outputs re-keyed when the home's rules version is not ours (one small
        read when it is); see :mod:`reverie.stores.rekey`."""
        s = self.services
        done = await rekey.bring_up_to_date(s.db, s.now)
        if done is not None:
            record, seconds = done
            log.info("rules_rekeyed", **record.to_dict(), seconds=round(seconds, 3))

    async def rekeyed(self) -> rekey.Rekeyed | None:
        """The home's last re-keying to new rules (what ``reverie show`` reports)."""
        return await self.services.db.read(rekey.last)

    async def _rebuild_projections(self) -> None:
        """Files are projections: a namespace whose files cannot be rebuilt is reported (a
        warning, and ``projection_failures``), not fatal, and the others are still rebuilt.
        A database holding less than its files show is refused (:class:`HomeError`)."""
        s = self.services
        try:
            rebuilt = await s.db.read(s.projector.rebuild)
        except OSError as exc:  # the home itself (its lock file, its listing)
            self.projection_failures = {"": f"{type(exc).__name__}: {exc}"}
            log.warning("projections_rebuild_failed", error=repr(exc))
            self._names.add(await s.db.read(entries.namespaces))
            return
        self._names.add([*rebuilt.namespaces, *rebuilt.folders])
        self.projection_failures = dict(rebuilt.failures)
        for namespace, error in rebuilt.failures.items():
            log.warning("projections_rebuild_failed", namespace=namespace, error=error)
        if rebuilt.files:
            log.info("projections_rebuilt", files=rebuilt.files)

    @property
    def services(self) -> Parts:
        if self._state is not State.OPEN or self._services is None:
            raise ClosedError(
                f"the runtime is {self._state.value}; use `async with reverie.open(...)`"
            )
        return self._services

    @property
    def tracer(self) -> trace.Tracer:
        return self._tracer

    # -- the API --------------------------------------------------------------------------

    def namespace(self, name: str = DEFAULT_NAMESPACE) -> Namespace:
        """A user's or project's isolated memory."""
        return Namespace(self, self._names.claim("namespace", _check_name("namespace", name)))

    async def namespaces(self, include_archived: bool = False) -> list[str]:
        """Every namespace that holds data or was created, sorted; archived ones only with
        ``include_archived``."""
        _flag("include_archived", include_archived)
        names = await self.services.db.read(
            lambda conn: namespaces.names(conn, include_archived=include_archived)
        )
        self._names.add(names)  # stored names are always accepted as they are
        return names

    # -- namespace management (see docs/records.md, "Namespaces") -------------------------

    async def create_namespace(
        self, name: str, settings: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """A new, empty namespace with its own settings (caps, tier numbers: any of
        ``config.NAMESPACE_KEYS``); refused when it exists. Audited."""
        name = self.namespace(name).name
        wanted = namespaces.checked(self.config, settings or {})
        s = self.services
        await s.db.write(lambda conn: namespaces.create(conn, name, wanted, s.now()))
        return await self.namespace_info(name)

    async def namespace_info(self, name: str) -> dict[str, Any]:
        """Sessions, created and archived times, the settings overrides with the values
        they replace, and the record counts per tier, kind, status and priority."""
        name = self.namespace(name).name
        return await self.services.db.read(lambda conn: namespaces.info(conn, name, self.config))

    async def archive_namespace(self, name: str) -> dict[str, Any]:
        """Make the namespace read-only (reversible; nothing is deleted): writes raise
        :class:`NamespaceArchived`, reviews skip it, reads and exports still work."""
        await self._namespace_change(name, namespaces.archive)
        return await self.namespace_info(name)

    async def restore_namespace(self, name: str) -> dict[str, Any]:
        """Undo :meth:`archive_namespace`: the namespace takes writes again."""
        await self._namespace_change(name, namespaces.restore)
        return await self.namespace_info(name)

    async def set_namespace_settings(
        self, name: str, settings: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Merge overrides into the namespace's settings (None removes one); checked as the
        config file is, nothing written when refused. The writer and the learner read them
        in each write, so they apply from the next one on, in a running runtime too."""
        changes = namespaces.checked(self.config, settings, removing=True)
        await self._namespace_change(
            name,
            lambda conn, ns, now: namespaces.set_settings(conn, ns, changes, now),
        )
        return await self.namespace_info(name)

    async def _namespace_change(
        self, name: str, change: Callable[[sqlite3.Connection, str, str], Any]
    ) -> None:
        name = self.namespace(name).name
        s = self.services
        await s.db.write(lambda conn: change(conn, name, s.now()))

    async def review(self, force: bool = False) -> dict[str, Any]:
        """One bg_review full pass now, over every namespace: lint (L5), distill (L4),
        promote (L6), curate (L7), each behind its own due-check. Without ``force`` the
        6 h cooldown applies. Namespaces are reviewed ``reviewer.concurrency`` at a time;
        one with nothing new since its last pass is skipped (one query finds them all), and
        a model that failed is asked again once per round. Returns what each stage of each
        namespace did."""
        _flag("force", force)
        s = self.services
        s.judge.breaker.new_round()
        names, quiet = await s.db.read(
            lambda conn: (entries.namespaces(conn), review_state.quiet(conn, s.now()))
        )  # one snapshot, one hop
        self._names.add(names)
        reports = await self._review_each([n for n in names if n not in quiet], force)
        for name in quiet.intersection(names):
            reports[name] = NamespaceReport(name, ran=False, force=force, reason=NOTHING_NEW)
        return RoundReport.of(force, reports, names).to_dict()

    async def _review_each(self, names: list[str], force: bool) -> dict[str, NamespaceReport]:
        """Review ``names`` at most ``reviewer.concurrency`` at a time; one namespace's
        failure is its own report, never the round's."""
        limiter = anyio.CapacityLimiter(self.config.reviewer.concurrency)
        reports: dict[str, NamespaceReport] = {}

        async def one(name: str) -> None:
            async with limiter:
                try:
                    reports[name] = await self.namespace(name)._review(force)
                except ReverieError as exc:
                    reports[name] = NamespaceReport(name, ran=False, force=force, reason=str(exc))

        async with anyio.create_task_group() as tg:
            for name in names:
                tg.start_soon(one, name)
        return reports

    async def model_calls(self, namespace: str | None = None) -> dict[str, dict[str, int]]:
        """Model calls, deferrals and tokens per stage, counted from the ledger."""
        if namespace is not None:
            _read_text("namespace", namespace)
        return await self.services.db.read(lambda conn: calls_per_stage(conn, namespace))

    async def wait_idle(self) -> None:
        """Until no actor has pending work."""
        await self.services.bus.wait_idle()


@public_errors
class Namespace:
    """The isolation boundary: nothing read or written here is visible from another."""

    def __init__(self, runtime: Reverie, name: str) -> None:
        self.runtime = runtime
        self.name = name

    def session(self, session_id: str, *, prefetch: bool | None = None) -> Session:
        """A conversation; ``prefetch=False`` turns the next-round prefetch off for it
        alone (a host's internal session), None follows ``prefetch.enabled``."""
        if prefetch is not None:
            _flag("prefetch", prefetch)
        return Session(self, _check_name("session id", session_id), prefetch)

    async def search(
        self,
        query: str,
        k: int = 10,
        *,
        include_superseded: bool = False,
        include_cold: bool = True,
        mode: Literal["default", "bundle"] = "default",
    ) -> SearchResults:
        """Ranked hits over live facts, entries and episodes (BM25); superseded facts are
        hidden unless asked for, and ``.hidden_superseded`` says how many were. COLD
        records rank below the warm and hot ones (``include_cold=False`` leaves them out);
        each fact or entry returned counts as an access of its record. ``mode="bundle"``:
        seed 004's Bundle Search over the M-FLOW graph (docs/graph.md), current units
        only, each hit with the ``path`` that justified it."""
        if mode not in SEARCH_MODES:
            raise InputError(f"mode is one of {', '.join(SEARCH_MODES)}, got {quoted(mode)}")
        if not isinstance(query, str):
            raise InputError(f"query must be a string, got {type(query).__name__}")
        check_text("query", query)
        if not isinstance(k, int) or isinstance(k, bool) or k < 0:
            raise InputError(f"k must be a non-negative integer, got {quoted(k)}")
        _flag("include_superseded", include_superseded)
        _flag("include_cold", include_cold)
        if mode == "bundle":
            hits = await self._bundle(query, k, include_cold)
        else:
            hits = await self._search(query, k, include_superseded, include_cold)
        s = self.runtime.services
        await s.accessed(self.name, [h.id for h in hits if h.kind != "episode"], "search")
        return hits

    async def _search(
        self,
        query: str,
        k: int,
        include_superseded: bool,
        include_cold: bool,
        span_name: str = "reverie.search",
    ) -> SearchResults:
        s = self.runtime.services
        with s.tracer.start_as_current_span(span_name) as span:
            span.set_attribute("gen_ai.operation.name", "search_memory")
            span.set_attribute("gen_ai.memory.store.id", self.name)
            vectors, vector = self.runtime.vectors, None
            if vectors is not None:
                limit = s.config.embedder.max_embed_per_search
                vector = await vectors.for_search(self.name, query, limit, s.now())
            hits = await s.db.read(
                lambda conn: search_store.search(
                    conn,
                    self.name,
                    query,
                    k,
                    include_superseded=include_superseded,
                    now=s.clock.now(),
                    ranking=s.config.ranking,
                    query_vector=vector,
                    embedder=vectors.embedder.name if vectors is not None else None,
                    include_cold=include_cold,
                )
            )
            span.set_attribute("reverie.search.hits", len(hits))
            span.set_attribute("reverie.search.hidden_superseded", hits.hidden_superseded)
            return hits

    async def _bundle(
        self, query: str, k: int, include_cold: bool, span_name: str = "reverie.search"
    ) -> SearchResults:
        """Bundle search over a graph brought up to date first (the grapher's ask: nothing
        to do costs a few indexed reads)."""
        s = self.runtime.services
        try:
            await s.bus.ask(GraphDue(self.name, refine=False, project=False))
        except ActorDisabled:  # the graph's switch is off: search the graph as it stands
            pass
        except (errors.StoreError, errors.TimeoutError, errors.InternalError) as exc:
            log.warning("graph_not_brought_up_to_date", namespace=self.name, error=repr(exc))
        with s.tracer.start_as_current_span(span_name) as span:
            span.set_attribute("gen_ai.operation.name", "search_memory")
            span.set_attribute("gen_ai.memory.store.id", self.name)
            span.set_attribute("reverie.search.mode", "bundle")
            vectors, vector = self.runtime.vectors, None
            if vectors is not None:
                limit = s.config.embedder.max_embed_per_search
                vector = await vectors.for_search(self.name, query, limit, s.now())
            embedder = vectors.embedder.name if vectors is not None else None
            hits = await s.db.read(
                lambda conn: graph_store.search_hits(
                    conn, self.name, query, k, vector, embedder, include_cold
                )
            )
            span.set_attribute("reverie.search.hits", len(hits))
            return SearchResults(hits, 0)

    async def chain(self, entry_id: str) -> list[Fact]:
        """The supersede chain a fact belongs to, oldest first (empty if unknown)."""
        _read_text("entry_id", entry_id)
        return await self.runtime.services.db.read(
            lambda conn: topics.chain(conn, self.name, entry_id)
        )

    async def ledger(self, entry_id: str | None = None) -> list[LedgerRecord]:
        """The audit ledger, oldest first."""
        if entry_id is not None:
            _read_text("entry_id", entry_id)
        return await self.runtime.services.db.read(
            lambda conn: ledger.read(conn, self.name, entry_id=entry_id)
        )

    async def facts(self, topic: str) -> list[Fact]:
        """The live facts of one topic, oldest first."""
        _read_text("topic", topic)
        return await self.runtime.services.db.read(lambda conn: topics.live(conn, self.name, topic))

    async def entries(self, target: str = "memory") -> list[Any]:
        """The live entries of one memory target (MEMORY.md, USER.md, SOUL.md, …)."""
        if _read_text("target", target) not in MEMORY_TARGETS:
            raise InputError(
                f"target must be one of {', '.join(MEMORY_TARGETS)}; got {quoted(target, 60)}"
            )
        return await self.runtime.services.db.read(
            lambda conn: entries.live(conn, self.name, target)
        )

    async def snapshot(self) -> Snapshot:
        """The block a session would inject now; the records it carries count an access."""
        s = self.runtime.services

        def read(conn: sqlite3.Connection) -> Snapshot:  # with the namespace's own caps
            return take(conn, self.name, namespaces.effective(conn, self.name, s.config), s.now())

        taken = await s.db.read(read)
        await s.accessed(self.name, list(taken.carried), "snapshot")
        return taken

    async def restore(self, entry_id: str) -> dict[str, Any]:
        """Bring back a removed or replaced entry, or an earlier value of a fact."""
        return await self._ask(Restore(self.name, entry_id))

    async def call_result(self, call_id: str) -> dict[str, Any] | None:
        """What a tool call made with ``call_id`` answered, if it committed; None when nothing
        of it was written (never taken up, withdrawn on cancellation, or refused). Asked of
        the writer, behind every call sent before, so a call in flight is decided first."""
        _check_call_id(call_id)
        s = self.runtime.services
        try:
            answer = await s.bus.ask(CallLookup(self.name, call_id))
        except ActorDisabled:  # no writer runs, so no call is in flight
            answer = await s.db.read(lambda conn: _stored_answer(conn, self.name, call_id))
        assert answer is None or isinstance(answer, ToolResult)
        return None if answer is None else answer.to_dict()

    async def review(self, force: bool = False) -> dict[str, Any]:
        """One review pass of this namespace now (see :meth:`Reverie.review`)."""
        return (await self._review(force)).to_dict()

    async def _review(self, force: bool = False) -> NamespaceReport:
        """:meth:`review`, typed: the pass's :class:`~reverie.reports.NamespaceReport`."""
        _flag("force", force)
        runtime = self.runtime
        timeout = runtime.config.reviewer.lease_s + runtime.config.actors.ask_timeout_s
        try:
            answer = await runtime.services.bus.ask(
                ReviewDue(self.name, force=force), timeout_s=timeout
            )
        except ReverieError as exc:  # the reviewer's kill switch, or closing
            return NamespaceReport(self.name, ran=False, force=force, reason=str(exc))
        assert isinstance(answer, NamespaceReport)
        return answer

    async def skills(self, include_archived: bool = False) -> list[Skill]:
        _flag("include_archived", include_archived)

        def read(conn: sqlite3.Connection) -> list[Skill]:
            if include_archived:
                return skills.every(conn, self.name)
            return skills.registered(conn, self.name)

        return await self.runtime.services.db.read(read)

    async def skill_scores(self) -> list[dict[str, Any]]:
        """Every registered skill's activity score as of now (seed 004: calls × quality ×
        decay, 0–100, see :mod:`reverie.skills.scores`), highest first: its tier and mark,
        what the score was made of, and its last stored scoring (``previous_*``, None
        before the curator's first scoring of it)."""
        s = self.runtime.services
        return await s.db.read(lambda conn: skill_activity.table(conn, self.name, s.clock.now()))

    async def pin_skill(self, name: str, pinned: bool = True) -> dict[str, Any]:
        """A pinned skill is never curated."""
        _flag("pinned", pinned)
        return await self._ask(PinSkill(self.name, name, pinned))

    async def curate(self, apply: bool = False) -> dict[str, Any]:
        """The curator's candidates; with ``apply``, archive them (reversibly)."""
        _flag("apply", apply)
        return await self._ask(Curate(self.name, apply=apply))

    async def dream(self, dry_run: bool = False) -> dict[str, Any]:
        """Seed 004's dream cycle now, due or not (see docs/dream.md): its record — what it
        read, recalled, learnt and measured — and the files it wrote (none on a dry run)."""
        _flag("dry_run", dry_run)
        result = await self.runtime.services.bus.ask(Dream(self.name, dry_run=dry_run))
        if isinstance(result, NamespaceArchived):
            raise result
        assert isinstance(result, DreamDetails)
        return result.to_dict()

    async def graph(self, rebuild: bool = False) -> dict[str, Any]:
        """The M-FLOW graph brought up to date now (``rebuild``: made again from scratch) and
        projected to ``<ns>/graph/``: what changed, each layer's size, and its shape (see
        docs/graph.md)."""
        _flag("rebuild", rebuild)
        s = self.runtime.services
        changed = await s.bus.ask(GraphDue(self.name, rebuild=rebuild))

        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            shape = graph_store.health(conn, self.name)
            return {"counts": graph_store.counts(conn, self.name), "shape": asdict(shape)}

        found = await s.db.read(read)
        folder = s.projector.namespace_dir(self.name) / "graph"
        return {"namespace": self.name, "changed": changed, **found, "files": str(folder)}

    async def learning_graph(self, max_nodes: int = DEFAULT_MAX_NODES) -> dict[str, Any]:
        """The learning graph's data: topics, MEMORY.md and USER.md entries, skills and
        patterns as nodes sized by activity, the links between them, and how many nodes
        the bound left out (see docs/skills.md#the-learning-graph-picture)."""
        return (await self._learning_graph(max_nodes)).to_dict()

    async def _learning_graph(self, max_nodes: int) -> LearningGraph:
        if not isinstance(max_nodes, int) or isinstance(max_nodes, bool) or max_nodes < 1:
            raise InputError(f"max_nodes must be a positive integer, got {quoted(max_nodes, 40)}")
        s = self.runtime.services

        def read(conn: sqlite3.Connection) -> LearningGraph:
            settings = namespaces.effective(conn, self.name, s.config).records
            return learning_graph(
                conn, self.name, s.clock.now(), max_nodes=max_nodes, settings=settings
            )

        return await s.db.read(read)

    async def draw_learning_graph(
        self, path: str | Path, format: str = "svg", max_nodes: int = DEFAULT_MAX_NODES
    ) -> dict[str, Any]:
        """Draw the learning graph into ``path`` as ``format`` (svg or png), written whole;
        what was drawn. A bad format or path, or no ``picture`` extra: a clear error,
        nothing written."""
        drawing.check_format(format)
        drawing.check_path(path)
        if drawing.missing_requirement() is not None:
            raise ConfigError(drawing.INSTALL_HINT)
        graph = await self._learning_graph(max_nodes)
        written = await anyio.to_thread.run_sync(drawing.draw, graph, path, format)
        return {**graph.to_dict(), "path": str(written), "format": format}

    async def profile(self) -> dict[str, Any]:
        """The current profile (USER.md) and self-model (SOUL.md) syntheses, each with its
        clauses, the ids of each clause's sources, and whether each is still grounded in a
        live source (see docs/skills.md#profile-and-self-model-synthesis); None for one not
        written."""
        return await self.runtime.services.db.read(lambda conn: syntheses.current(conn, self.name))

    async def dream_status(self) -> dict[str, Any]:
        """The graph's size, the health score as of now (each metric and its weight), the
        pattern count, the last dream, the next one due, and the long-term counts."""
        s = self.runtime.services
        return await s.db.read(lambda conn: dream_status.status(conn, self.name, s.clock.now()))

    async def dream_report(self, kind: str = "dream", date: str | None = None) -> str:
        """A dream's report (``kind="dream"``) or the daily one (``"daily"``, written with
        the evening dream), of ``date`` (YYYY-MM-DD) or the latest, rendered from the
        dream's ledger row (its file is a projection of it)."""
        if not isinstance(kind, str) or kind not in REPORT_KINDS:
            raise InputError(f"kind must be one of {sorted(REPORT_KINDS)}, got {quoted(kind, 40)}")
        if date is not None and (not isinstance(date, str) or not _DAY.fullmatch(date)):
            raise InputError(f"date must be YYYY-MM-DD, got {quoted(date, 40)}")
        day = "daily_date" if kind == "daily" else "date"
        found = await self.runtime.services.db.read(
            lambda conn: dream_store.run_of(conn, self.name, day, date)
        )
        if found is None:
            when = f" of {date}" if date else ""
            raise InputError(
                f"no {kind} report{when} in namespace {self.name!r}: run `reverie dream`"
            )
        return REPORT_KINDS[kind](found)

    # -- skill drafts (issue 13) ----------------------------------------------------------

    async def skill_drafts(self, include_decided: bool = False) -> list[SkillDraft]:
        """The drafted skills waiting for a person (``include_decided``: the accepted and
        rejected ones too), best ranked first; the curator's review pass writes them."""
        _flag("include_decided", include_decided)
        state = None if include_decided else "draft"
        return await self.runtime.services.db.read(
            lambda conn: drafts_store.every(conn, self.name, state)
        )

    async def stale_skills(self) -> list[StaleSkill]:
        """Registered skills none of whose trigger words users said lately (reported only,
        never archived for it)."""
        s = self.runtime.services
        now = s.clock.now()
        seen = await s.db.read(lambda conn: skill_drafts.look(conn, self.name, now, s.config))
        return skill_drafts.stale_skills(seen, now, s.config)

    async def accept_draft(self, name: str) -> dict[str, Any]:
        """Make a waiting draft a skill through skill_manage create (its caps, secret scan
        and ledger row); the draft is marked accepted and its file goes."""
        s = self.runtime.services
        draft = await self._waiting_draft(name)
        if isinstance(draft, dict):
            return draft
        arguments = {"action": "create", "name": name, "content": draft.body}
        try:
            command = parse_call("skill_manage", arguments, s.config.writer)
        except ToolInputError as exc:
            return refused(f"draft {name!r} cannot become a skill: {exc}").to_dict()
        result = await self._ask(ToolCall(self.name, None, command))
        if result["decision"] != Decision.CREATED:
            return result
        await self._decide_draft(name, "accepted", "accept", "ACCEPTED")
        return {**result, "draft": name}

    async def reject_draft(self, name: str) -> dict[str, Any]:
        """Reject a waiting draft: its gap is never drafted again; its row stays."""
        draft = await self._waiting_draft(name)
        if isinstance(draft, dict):
            return draft
        await self._decide_draft(name, "rejected", "reject", "REJECTED")
        return {
            "decision": "REJECTED",
            "entry_id": f"draft:{name}",
            "message": f"draft {name!r} rejected; its gap will not be drafted again",
            "name": name,
        }

    async def _waiting_draft(self, name: str) -> SkillDraft | dict[str, Any]:
        if not isinstance(name, str) or not name:
            return refused("name must be a non-empty string").to_dict()
        found = await self.runtime.services.db.read(
            lambda conn: drafts_store.get(conn, self.name, name)
        )
        if found is None or found.state != "draft":
            state = "no draft" if found is None else f"draft already {found.state}:"
            return refused(f"{state} {quoted(name)} in namespace {self.name!r}").to_dict()
        return found

    async def _decide_draft(self, name: str, state: str, action: str, decision: str) -> None:
        s = self.runtime.services
        now = s.now()

        def write(conn: sqlite3.Connection) -> None:
            namespaces.check_open(conn, self.name)
            drafts_store.set_state(conn, self.name, name, state, now)
            skill_drafts.audit(conn, self.name, name, action, decision, now, {}, actor="host")

        await s.db.write(write)
        try:
            skill_drafts.unproject(s.projector, self.name, name)
        except OSError as exc:
            log.warning("projection_failed", namespace=self.name, error=bounded(repr(exc)))

    async def restore_skill(self, name: str) -> dict[str, Any]:
        """Bring an archived skill back: its directory and its registration."""
        return await self._ask(Curate(self.name, restore=name))

    async def skill_proposals(self) -> list[dict[str, Any]]:
        """The curator's proposals for agent-made skills as they stand, written nowhere:
        ``consolidate`` (overlapping skills merged into one) then ``patch`` (bloated ones
        trimmed), each with its names, merged name, body, dropped lines and sizes."""
        found = []
        for kind in ("consolidate", "patch"):
            answer = await self._reshape(ReshapeSkills(self.name, kind))
            found += answer.get("proposals", [])
        return found

    async def consolidate_skills(self, apply: bool = False) -> dict[str, Any]:
        """Merge overlapping agent-made skills: the proposals (dry run), or with ``apply``
        the merges made — originals archived reversibly (see :meth:`unmerge_skill`)."""
        _flag("apply", apply)
        return await self._reshape(ReshapeSkills(self.name, "consolidate", apply=apply))

    async def patch_skills(self, apply: bool = False) -> dict[str, Any]:
        """Trim bloated agent-made skills (repetition, then the longest sections' prose):
        the proposals (dry run), or with ``apply`` the trims made (see :meth:`unpatch_skill`)."""
        _flag("apply", apply)
        return await self._reshape(ReshapeSkills(self.name, "patch", apply=apply))

    async def unmerge_skill(self, name: str) -> dict[str, Any]:
        """Undo a merge as a whole: the merged skill's body back as it was before the merge
        and the other originals restored from the archive."""
        return await self._reshape(UndoReshape(self.name, _read_text("name", name), "merge"))

    async def unpatch_skill(self, name: str) -> dict[str, Any]:
        """Undo the last trim of a skill: its body before the trim, from the ledger."""
        return await self._reshape(UndoReshape(self.name, _read_text("name", name), "trim"))

    async def _reshape(self, message: ReshapeSkills | UndoReshape) -> dict[str, Any]:
        """The curator's answer to a consolidate / patch request or an undo, as a dict."""
        try:
            result = await self.runtime.services.bus.ask(message)
        except ReverieError as exc:
            return refused(str(exc)).to_dict()
        if isinstance(result, NamespaceArchived):
            raise result
        assert isinstance(result, Reshaped | ToolResult)
        return result.to_dict()

    async def _ask(self, message: Any) -> dict[str, Any]:
        """A write the writer (or the curator) answers, as the host-facing dict."""
        try:
            result = await self.runtime.services.bus.ask(message)
        except ReverieError as exc:
            return refused(str(exc)).to_dict()
        if isinstance(result, NamespaceArchived):
            raise result
        assert isinstance(result, ToolResult)
        return result.to_dict()

    async def episodes(self, after_id: int = 0) -> list[Episode]:
        """The episode log past ``after_id``, oldest first."""
        if not isinstance(after_id, int) or isinstance(after_id, bool):
            raise InputError(f"after_id must be an integer, got {quoted(after_id, 60)}")
        return await self.runtime.services.db.read(
            lambda conn: episodes.since(conn, self.name, after_id)
        )

    # -- seed 003's learning records ----------------------------------------------------

    async def query(self, q: str) -> list[LearningRecord]:
        """Learning records by seed 003's query language (:mod:`reverie.rules.query`):
        ``priority:high tier:warm kind:error since:2026-01-01 "free text" sort:access
        limit:20``. A token that cannot be read raises :class:`QueryError` naming it."""
        s = self.runtime.services
        if len(_read_text("query", q)) > _MAX_QUERY_CHARS:
            raise InputError(f"a query is at most {_MAX_QUERY_CHARS} chars, got {len(q)}")
        parsed = parse(q, s.clock.now())
        return await s.db.read(lambda conn: learning.select(conn, self.name, parsed))

    async def record(self, record_id: str) -> LearningRecord | None:
        """One learning record by its id (an entry's, a fact's, ``skill:<name>``, ``lrn-…``)."""
        _read_text("record_id", record_id)
        return await self.runtime.services.db.read(
            lambda conn: learning.get(conn, self.name, record_id)
        )

    async def access_history(self, record_id: str) -> list[tuple[str, str]]:
        """A record's accesses, oldest first: (when, how)."""
        _read_text("record_id", record_id)
        return await self.runtime.services.db.read(
            lambda conn: learning.history(conn, self.name, record_id)
        )

    async def learn(
        self, content: str, kind: str = "insight", priority: str = "medium"
    ) -> dict[str, Any]:
        """Seed 003's manual trigger: a learning said by hand, HOT; NOOP naming its twin
        when an active record of its kind says the same. Secrets are refused."""
        _read_text("content", content)
        _read_text("kind", kind)
        _read_text("priority", priority)
        if not content.strip() or len(content) > self.runtime.config.writer.max_content_chars:
            raise InputError("content must be non-empty text within writer.max_content_chars")
        if not kind.isidentifier() or len(kind) > 40 or kind in ("entry", "fact", "skill"):
            raise InputError(f"kind must be a word naming a log record, got {quoted(kind, 40)}")
        if priority not in PRIORITIES:
            raise InputError(f"priority is one of {', '.join(PRIORITIES)}, got {quoted(priority)}")
        found = secret_kind(content)
        if found is not None:
            raise InputError(refusal(found, "content", content))
        return await self._ask(Learn(self.name, kind, content.strip(), priority))

    async def set_tier(self, record_id: str, tier: str) -> LearningRecord:
        """Move a record to ``tier`` by hand (audited; move it back to undo)."""
        if _read_text("tier", tier) not in TIERS:
            raise InputError(f"tier is one of {', '.join(TIERS)}, got {quoted(tier)}")
        return await self._move(MoveRecord(self.name, _read_text("record_id", record_id), tier))

    async def recall(self, record_id: str) -> LearningRecord:
        """Seed 003's recall: the record back to HOT, counted as a reference."""
        _read_text("record_id", record_id)
        return await self._move(MoveRecord(self.name, record_id, "hot", why="recalled"))

    async def promote(self, record_id: str) -> LearningRecord:
        """Seed 003's promote: the record's priority up one level (audited)."""
        _read_text("record_id", record_id)
        return await self._move(MoveRecord(self.name, record_id, raise_priority=True))

    async def _move(self, message: MoveRecord) -> LearningRecord:
        if await self.record(message.record_id) is None:  # the learner checks again
            raise InputError(f"no record {quoted(message.record_id)} in {self.name!r}")
        answer = await self.runtime.services.bus.ask(message)
        if isinstance(answer, NamespaceArchived):
            raise answer
        assert isinstance(answer, LearningRecord)
        return answer

    async def status(self) -> dict[str, Any]:
        """Counts of records per tier, kind, status and priority; the session count and
        the last heartbeat."""
        return await self.runtime.services.db.read(lambda conn: learning.status(conn, self.name))

    async def patterns(self) -> list[Pattern]:
        """The pattern library (seed 003's pattern-detected, seed 004's format), newest
        first."""
        return await self.runtime.services.db.read(
            lambda conn: pattern_store.library(conn, self.name)
        )

    async def reindex(self) -> dict[str, Any]:
        """Seed 003's ``prime``: the search rows made again from the database, then the
        record files (``index.jsonl``, the HOT logs, the pattern files) rewritten."""
        s = self.runtime.services
        rows = await s.db.write(lambda conn: search_store.reindex(conn, self.name))
        files = await s.bus.ask(RecordsDue(self.name))
        try:
            graphed = await s.bus.ask(GraphDue(self.name, rebuild=True))
        except ActorDisabled:
            graphed = 0
        return {"namespace": self.name, "search_rows": rows, "files": files, "graph": graphed}

    # -- issue 11: import and export ------------------------------------------------------

    async def export(self, format: str = "jsonl") -> str:  # noqa: A002
        """The namespace's learning records as JSONL (lossless: see docs/records.md) or as
        seed 003's Markdown."""
        if _read_text("format", format) not in transfer.EXPORT_FORMATS:
            raise InputError(f"format is one of {', '.join(transfer.EXPORT_FORMATS)}")
        return await self.runtime.services.db.read(
            lambda conn: transfer.export(conn, self.name, format)
        )

    async def import_records(
        self,
        source: str | Path | Sequence[str],
        *,
        format: str | None = None,  # noqa: A002
    ) -> transfer.ImportReport:
        """Import a JSONL export (a file, or its lines as a list of strings), a Hermes
        memories folder or an OpenClaw workspace (the format found from the path unless
        named). An export into an empty namespace is
        restored as it was; anything else goes through the writer's rules. A source that
        cannot be read raises :class:`InputError` and writes nothing; a bad line is an
        ERROR in the report, and only that line is skipped."""
        s = self.runtime.services
        planned = await anyio.to_thread.run_sync(transfer.plan, source, format)
        return await transfer.apply(
            planned,
            self.name,
            s.db,
            s.bus.ask,
            s.config.writer,
            lambda: s.db.read(s.projector.rebuild),
            s.now(),
        )


@public_errors
class Session:
    """One conversation: a frozen snapshot, the tools, turns, idle and pre-compact events."""

    def __init__(self, namespace: Namespace, session_id: str, prefetch: bool | None = None) -> None:
        self.namespace = namespace
        self.id = session_id
        self._snapshot: Snapshot | None = None
        self._state = State.NEW
        settings = namespace.runtime.config.prefetch
        if prefetch is not None:
            settings = replace(settings, enabled=prefetch)
        self._prefetch = Prefetcher(settings, namespace.name, session_id, self._prefetch_search)

    async def __aenter__(self) -> Self:
        if self._state is not State.NEW:
            raise ClosedError("a session opens once")
        self._snapshot = await self.namespace.snapshot()
        self._state = State.OPEN
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._state is State.OPEN:
            self._state = State.CLOSED
            self._prefetch.clear()
            try:  # the extractor's catch-up; the next flush does it anyway
                await self._tell(SessionEnded(self.namespace.name, self.id))
            except ReverieError as exc:  # the runtime is closing: never mask the host's error
                log.debug("session_end_not_sent", session=self.id, error=str(exc))

    @property
    def snapshot(self) -> Snapshot:
        """Taken when the session opened; never updated while it runs."""
        if self._snapshot is None:
            raise ClosedError("the snapshot is taken when the session is entered")
        return self._snapshot

    @property
    def tools(self) -> list[dict[str, Any]]:
        return schemas(self.namespace.runtime.config.writer)

    @property
    def prefetched(self) -> str:
        """The next-round prefetch block for the host's next prompt ("" while none is
        ready): the records most relevant to the last turn's user text, fetched in the
        background after it (see :mod:`reverie.prefetch`); the next turn clears it."""
        return self._prefetch.text

    @property
    def prefetch_result(self) -> Prefetch | None:
        """What :attr:`prefetched` shows, structured: the hits, the query, the turn."""
        return self._prefetch.result

    async def wait_prefetch(self) -> None:
        """Until the fetch started by the last turn is done (hosts that want the block
        before their next prompt, tests); at once when none is in flight, or when the
        runtime is closed (its task group ended every fetch, even one that never began)."""
        if self.namespace.runtime._state is State.OPEN:
            await self._prefetch.wait()

    async def _prefetch_search(self, query: str, k: int, mode: str) -> list[SearchHit]:
        """The prefetch's search: the namespace's, without counting accesses, on a span of
        its own (a host counting its searches does not count the prefetches)."""
        ns = self.namespace
        if mode == "bundle":
            return await ns._bundle(query, k, True, span_name=PREFETCH_SPAN)
        return await ns._search(query, k, False, True, span_name=PREFETCH_SPAN)

    def _open(self) -> Reverie:
        if self._state is not State.OPEN:
            raise ClosedError(f"session {self.id!r} is {self._state.value}")
        return self.namespace.runtime

    async def _tell(self, message: Any) -> None:
        await self.namespace.runtime.services.bus.tell(message)

    async def call_tool(
        self, name: str, arguments: Any, *, call_id: str | None = None
    ) -> dict[str, Any]:
        """Run one tool call; always a JSON-able result, never an exception.

        Cancellation: a call cancelled (or timed out) before the writer took it up is
        withdrawn whole and never runs; one the writer had taken up runs to its end and may
        have landed. A host that may cancel passes its own ``call_id`` (≤ 200 chars): the
        answer of a call that committed is stored in the same transaction as the write,
        ``await ns.call_result(call_id)`` then says exactly whether and how it landed (None:
        nothing was written), and repeating the call with the same id replays the stored
        answer (``"replayed": true``) instead of writing twice."""
        runtime = self.namespace.runtime
        action = arguments.get("action") if isinstance(arguments, dict) else None
        # the agent's text: a span name carries only a known tool, never a secret or a MB
        attributes = tool_attributes(self.namespace.name, name, action)
        tool = attributes["gen_ai.tool.name"]
        with runtime.tracer.start_as_current_span(f"execute_tool {span_tool(name)}") as span:
            for key, value in attributes.items():
                span.set_attribute(key, value)
            span.set_attribute("gen_ai.conversation.id", self.id)
            result = await self._call(runtime, name, arguments, call_id)
            span.set_attribute("reverie.decision", result.decision.value)
            if result.entry_id:
                span.set_attribute("reverie.entry_id", result.entry_id)
            if result.error is not None:
                span.set_status(Status(StatusCode.ERROR, bounded(result.error)))
            if debug_wanted("reverie.runtime"):
                log.debug(
                    "tool_call",
                    namespace=self.namespace.name,
                    session=self.id,
                    tool=tool,
                    decision=result.decision.value,
                    entry_id=result.entry_id,
                )
            return result.to_dict()

    async def _call(
        self, runtime: Reverie, name: str, arguments: Any, call_id: str | None
    ) -> ToolResult:
        try:
            self._open()
            command = parse_call(name, arguments, runtime.config.writer)
            if call_id is not None:
                _check_call_id(call_id)
            if isinstance(command, TopicCommand) and command.action in {"read", "list"}:
                return await self._topic_read(command)
            result = await runtime.services.bus.ask(
                ToolCall(self.namespace.name, self.id, command, call_id=call_id)
            )
            assert isinstance(result, ToolResult)
            return result
        except ToolInputError as exc:
            return refused(str(exc))
        except errors.TimeoutError as exc:
            if exc.withdrawn:
                return refused(f"{exc}; retry the call")
            where = "call_result(call_id)" if call_id else "the topic or entries"
            return refused(f"{exc} (the database may be busy): read {where} before retrying")
        except ReverieError as exc:
            return refused(f"{exc}; nothing was written")
        except Exception as exc:  # never raise into the agent
            log.error("tool_call_failed", tool=agent_name(name), error=bounded(repr(exc)))
            return refused(f"internal error ({type(exc).__name__}); nothing was written")

    async def _topic_read(self, command: TopicCommand) -> ToolResult:
        name, runtime = self.namespace.name, self.namespace.runtime
        writer = runtime.config.writer
        limit, chars = writer.topic_read_facts, writer.topic_read_chars
        answer = await runtime.services.db.read(
            lambda conn: _topic_answer(conn, name, command, limit, chars)
        )
        await runtime.services.accessed(
            name, [f.entry_id for f in answer.facts or ()], "topic read"
        )
        return answer

    async def turn(self, user: str | None = None, assistant: str | None = None) -> Episode:
        """Record one turn as an episode; the extractor (L2) hears of it on the bus. The
        last turn's prefetch is cleared first; with user text, the next one starts in the
        background (:attr:`prefetched`)."""
        runtime = self._open()
        for label, text in (("user", user), ("assistant", assistant)):
            if text is not None and (
                not isinstance(text, str) or "\x00" in text or len(text) > _MAX_TURN_CHARS
            ):
                raise InputError(
                    f"{label} must be a string without NUL of at most {_MAX_TURN_CHARS} chars"
                )
            if text is not None:
                check_text(label, text)  # lone surrogates: refused here, nothing written
        user, assistant = user or None, assistant or None
        if not (user or assistant):
            raise InputError("a turn needs user or assistant text")
        self._prefetch.clear()  # the next turn is here: the last one's block is stale
        with runtime.tracer.start_as_current_span("reverie.turn") as span:
            span.set_attribute("gen_ai.conversation.id", self.id)
            span.set_attribute("gen_ai.memory.store.id", self.namespace.name)
            episode = await runtime.services.bus.ask(
                TurnRecord(self.namespace.name, self.id, user, assistant)
            )
            if isinstance(episode, NamespaceArchived):
                raise episode
            assert isinstance(episode, Episode)
            span.set_attribute("reverie.turn", episode.turn)
        if user and runtime._tg is not None:
            self._prefetch.start(runtime._tg, user, episode.turn)
        return episode

    async def used_skill(self, name: str, ok: bool | None = None) -> dict[str, Any]:
        """The agent used a skill: its idle clock restarts, so the curator keeps it, and the
        use counts toward its activity score with its outcome — ``ok`` True (it worked),
        False (it failed) or None (not known; neither, see :mod:`reverie.skills.scores`)."""
        self._open()
        if ok is not None:
            _flag("ok", ok)
        outcome = skill_activity.outcome_of(ok)
        return await self.namespace._ask(SkillUsed(self.namespace.name, self.id, name, outcome))

    async def idle(self) -> None:
        """The session went idle: the flush (L3) and then the review bus (L8) hear of it."""
        self._open()
        await self._tell(SessionIdle(self.namespace.name, self.id))

    async def pre_compact(self) -> None:
        """Context is about to be compacted: a forced flush of this namespace, awaited —
        and only it: a review or flush running in another namespace is not waited for.
        The flush is a stage, so its failure never raises into the host: the bus logged it
        and put it on the flush's span, the watermark stayed, and a later flush retries.
        Only misuse raises (:class:`ClosedError`: the session or runtime is not open)."""
        runtime = self._open()
        settings = runtime.config
        timeout = settings.flusher.timeout_s + settings.actors.ask_timeout_s
        try:
            await runtime.services.bus.ask(
                PreCompact(self.namespace.name, self.id), timeout_s=timeout
            )
        except ActorDisabled:  # the flush's kill switch is off: nothing to wait for
            return
        except ClosedError:
            raise
        except ReverieError as exc:  # fail-silent: logged here too, for the host's operator
            log.warning(
                "pre_compact_flush_failed",
                namespace=self.namespace.name,
                session=self.id,
                error=bounded(f"{type(exc).__name__}: {exc}"),
            )


def _read_text(field: str, value: object) -> str:
    """A text argument of a read, refused (named) when SQLite could not bind it."""
    if not isinstance(value, str):
        raise InputError(f"{field} must be a string, got {type(value).__name__}")
    check_text(field, value)
    return value


def _flag(field: str, value: object) -> bool:
    """A yes/no argument: only a bool, so ``force="no"`` is not silently true."""
    if not isinstance(value, bool):
        raise InputError(f"{field} must be True or False, got {quoted(value, 60)}")
    return value


def _stored_answer(conn: sqlite3.Connection, namespace: str, call_id: str) -> ToolResult | None:
    done = calls.get(conn, namespace, call_id)
    return None if done is None else ToolResult.from_dict(done.result)


def _check_call_id(call_id: object) -> None:
    """A host's call id: a short printable string (it is stored and looked up)."""
    if (
        not isinstance(call_id, str)
        or not call_id.strip()
        or len(call_id) > _MAX_CALL_ID_CHARS
        or not call_id.isprintable()
    ):
        raise ToolInputError(
            f"call_id must be a printable string of 1-{_MAX_CALL_ID_CHARS} chars, "
            f"got {quoted(call_id, 80)}"
        )
    check_text("call_id", call_id, ToolInputError)


def _topic_answer(
    conn: sqlite3.Connection, namespace: str, command: TopicCommand, limit: int, chars: int
) -> ToolResult:
    """The topic tool's read-only actions, answered from one consistent snapshot; a read
    shows at most ``limit`` facts and ``chars`` characters of them, newest first, and
    counts the rest."""
    if command.action == "list":
        listing = tuple(TopicListing(*row) for row in topics.index(conn, namespace))
        return ToolResult(Decision.NOOP, None, f"{len(listing)} topics", topics=listing)
    assert command.topic is not None
    if not topics.exists(conn, namespace, command.topic):
        return refused(f"no topic {quoted(command.topic)}; list the topics first")
    facts, total = topics.live_page(conn, namespace, command.topic, limit)
    shown, used = 0, 0
    for fact in facts:  # newest first, within the character budget (at least one fact)
        used += len(fact.content)
        if shown and used > chars:
            break
        shown += 1
    facts = facts[:shown]
    more = total - len(facts)
    return ToolResult(
        Decision.NOOP,
        None,
        f"{total} live facts"
        + (f"; the newest {len(facts)} shown, {more} older not shown" if more else ""),
        topic=command.topic,
        facts=tuple(FactView(f.id, f.content, f.created_at) for f in facts),
        more=more,
    )


def _configured_model(config: Config) -> Model:
    """The offline model unless the config names a server (``REVERIE_MODEL_URL`` …)."""
    settings = config.model
    if not settings.url:
        return OfflineModel()
    return OpenAICompatible(
        settings.url,
        settings.name or "default",
        settings.api_key,
        timeout_s=Timeout(settings.timeout_s, settings.connect_timeout_s),
        retries=settings.retries,
        backoff_s=settings.backoff_s,
        retry_after_max_s=settings.retry_after_max_s,
    )


SEARCH_MODES: tuple[str, ...] = ("default", "bundle")
"""``Namespace.search``'s modes: BM25 (and vectors) over the stores, or seed 004's Bundle
Search over the M-FLOW graph."""

ACTORS: tuple[type[Writer | Extractor | Flusher | Learner | Grapher | Reviewer | Stage], ...] = (
    Writer,
    Extractor,
    Flusher,
    Learner,
    Grapher,
    Reviewer,
    Linter,
    Distiller,
    Promoter,
    Curator,
    Profiler,
    Dreamer,
)
"""Every actor the design card names, each subscribed to the bus for its own messages."""


@dataclass(frozen=True, slots=True)
class Parts(Clocked):
    """What an open runtime is made of, for its own host-facing calls; each actor gets only
    its share (:func:`_wire`), never this."""

    db: Database
    projector: Projector
    config: Config
    clock: Clock
    bus: Bus
    tracer: trace.Tracer
    judge: Judge
    book: AccessBook

    async def accessed(self, namespace: str, ids: list[str], how: str) -> None:
        """Count a read's accesses (seed 003); the learner writes them in a batch."""
        if ids and self.config.records.enabled and self.book.note(namespace, ids, how, self.now()):
            await self.bus.tell(AccessesDue(namespace))


def _wire(parts: Parts, vectors: VectorIndex | None) -> dict[type[Actor], Callable[[str], Actor]]:
    """Each actor's factory, given the capabilities it uses and nothing else: the one place
    that knows who needs what."""
    db, projector, clock, config, bus, judge = (
        parts.db,
        parts.projector,
        parts.clock,
        parts.config,
        parts.bus,
        parts.judge,
    )
    stage: dict[str, Any] = {"db": db, "projector": projector, "clock": clock, "config": config}
    stages: dict[type[Actor], Callable[[str], Stage]] = {
        Linter: partial(Linter, judge=judge, **stage),
        Distiller: partial(Distiller, judge=judge, **stage),
        Promoter: partial(Promoter, judge=judge, bus=bus, **stage),
        Curator: partial(Curator, judge=judge, **stage),
        Profiler: partial(Profiler, judge=judge, bus=bus, **stage),
        Dreamer: partial(Dreamer, judge=judge, bus=bus, **stage),
    }

    def look_ahead(namespace: str, stamps: Mapping[str, Any]) -> Preview:
        return preview([make(namespace) for make in stages.values()], stamps)

    return {
        Writer: partial(Writer, db=db, projector=projector, bus=bus, clock=clock, config=config),
        Extractor: partial(Extractor, db=db, bus=bus, clock=clock, settings=config.extractor),
        Learner: partial(
            Learner,
            db=db,
            projector=projector,
            bus=bus,
            clock=clock,
            config=config,
            book=parts.book,
        ),
        Grapher: partial(
            Grapher, db=db, projector=projector, clock=clock, judge=judge, settings=config.graph
        ),
        Flusher: partial(
            Flusher, db=db, bus=bus, clock=clock, config=config, judge=judge, vectors=vectors
        ),
        Reviewer: partial(
            Reviewer,
            db=db,
            bus=bus,
            clock=clock,
            settings=config.reviewer,
            look_ahead=look_ahead,
        ),
        **stages,
    }


_DAY: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
REPORT_KINDS: Final = {"dream": dream_reports.dream, "daily": dream_reports.daily}
"""``Namespace.dream_report``'s kinds and their renderers."""


def open(  # noqa: A001
    home: str | Path,
    config: Config | None = None,
    model: Model | None = None,
    clock: Clock | None = None,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
    embedder: Embedder | None = None,
    *,
    create: bool = True,
    task_group: TaskGroup | None = None,
) -> Reverie:
    """A runtime for ``home``, to be used as ``async with reverie.open(home) as rv``;
    an ``embedder`` (or ``embedder.enabled`` in the config) makes search hybrid. With
    ``create=False`` a missing home raises :class:`HomeError` instead of being made.

    The actors run in a task group the runtime owns for its ``async with``; a host that
    wants them under its own cancellation scope passes its anyio ``task_group``. Under
    trio the runtime must be entered and left in one task (see :mod:`reverie.task_home`)."""
    try:
        return Reverie(
            home,
            config=config,
            model=model,
            clock=clock,
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
            embedder=embedder,
            create=create,
            task_group=task_group,
        )
    except ValueError as exc:  # a configured model or embedder client refused its settings
        raise ConfigError(f"bad model or embedder setting: {bounded(str(exc))}") from exc
