"""The bus: routes each message to the actors subscribed to its type, one actor per
(actor kind, namespace), spun up on demand and gone when its mailbox is empty.

Mailboxes are bounded memory object streams, so a producer that outruns an actor waits
(back-pressure) instead of growing memory. ``pending`` is counted synchronously when a
message is accepted, so an actor never exits while a message for it is on its way.

An asker only ever sees reverie's exception tree: an actor's failure reaches it mapped
(:func:`~reverie.errors.as_reverie_error`), a timeout as :class:`reverie.TimeoutError`. An
ask whose asker gives up (cancelled, timed out) before the actor took it up is withdrawn:
it never runs, so "cancelled before it started" means "nothing was written".
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from reverie.bus.actor import Actor
from reverie.bus.messages import Envelope, Message, Reply
from reverie.config import ActorConfig
from reverie.errors import ClosedError, ReverieError, TimeoutError, as_reverie_error, bounded
from reverie.telemetry.logs import get_logger

log = get_logger("reverie.bus")

ActorFactory = Callable[[str], Actor]


class ActorDisabled(ReverieError):
    """The actor's kill switch is off."""


class OverBudget(TimeoutError):
    """The actor overran its time budget on one message (it was cancelled)."""


@dataclass(slots=True)
class _Mailbox:
    """An actor's mailbox. Its stream is made when a message is first sent through it: a
    mailbox opened for an ask run on the asker's task (:meth:`Bus._ask_here`) mostly never
    queues anything, and then costs no stream."""

    actor: Actor
    size: int
    pending: int = 0
    asks: list[Reply] = field(default_factory=list)
    _stream: tuple[MemoryObjectSendStream[Envelope], MemoryObjectReceiveStream[Envelope]] | None = (
        None
    )

    @property
    def send(self) -> MemoryObjectSendStream[Envelope]:
        return self._streams()[0]

    @property
    def receive(self) -> MemoryObjectReceiveStream[Envelope]:
        return self._streams()[1]

    def _streams(
        self,
    ) -> tuple[MemoryObjectSendStream[Envelope], MemoryObjectReceiveStream[Envelope]]:
        if self._stream is None:
            self._stream = anyio.create_memory_object_stream[Envelope](self.size)
        return self._stream

    def close(self, *, receiving: bool = True) -> None:
        """Close its sending end (and its receiving end), if it was ever made."""
        if self._stream is not None:
            self._stream[0].close()
            if receiving:
                self._stream[1].close()


def _handled(box: _Mailbox, envelope: Envelope) -> None:
    """One message of ``box`` is done with. An ask cut off mid-handling (cancelled) stays
    listed, so the actor's stop fails it instead of leaving its asker waiting."""
    box.pending -= 1
    if envelope.reply is not None and envelope.reply.done:
        box.asks.remove(envelope.reply)


def _overrides(actor: Actor, hook: str) -> bool:
    """Whether the actor has a hook of its own (the base's do nothing: not awaited)."""
    return getattr(type(actor), hook) is not getattr(Actor, hook)


async def _within_budget(kind: str, actor: Actor, envelope: Envelope) -> Any:
    """``on_receive`` inside the actor's time budget; overrunning it is :class:`OverBudget`."""
    with anyio.CancelScope(deadline=anyio.current_time() + actor.budget_s) as scope:
        return await actor.on_receive(envelope)
    assert scope.cancelled_caught
    raise OverBudget(f"{kind} gave no answer within its {actor.budget_s:g} s budget; cancelled")


def _span_attributes(kind: str, envelope: Envelope) -> dict[str, str | int]:
    attributes: dict[str, str | int] = {
        "reverie.actor": kind,
        "reverie.namespace": envelope.message.namespace,
        "reverie.message.id": envelope.id,
    }
    if envelope.cause_id is not None:
        attributes["reverie.message.cause_id"] = envelope.cause_id
    return attributes


class Bus:
    """Message routing and actor lifecycles inside one task group owned by the runtime."""

    def __init__(self, tg: TaskGroup, settings: ActorConfig, tracer: trace.Tracer) -> None:
        self._tg = tg
        self._settings = settings
        self._tracer = tracer
        self._routes: dict[type[Message], list[tuple[str, ActorFactory]]] = {}
        self._mailboxes: dict[tuple[str, str], _Mailbox] = {}
        self._idle = anyio.Event()
        self._idle.set()
        self._closed = False
        self.failures = 0

    def subscribe(
        self, kind: str, message_types: tuple[type[Message], ...], factory: ActorFactory
    ) -> None:
        for message_type in message_types:
            self._routes.setdefault(message_type, []).append((kind, factory))

    def statistics(self) -> dict[str, int]:
        """Pending messages per live mailbox, for tests and diagnostics."""
        return {f"{kind}:{ns}": box.pending for (kind, ns), box in self._mailboxes.items()}

    async def tell(self, message: Message, *, cause: Envelope | None = None) -> int:
        """Fire and forget to every subscriber; returns how many actors it reached."""
        routes = self._routes.get(type(message), [])
        for kind, factory in routes:
            envelope = Envelope(message, cause_id=cause.id if cause else None)
            await self._deliver(kind, factory, envelope)
        return len(routes)

    async def ask(
        self, message: Message, timeout_s: float | None = None, *, here: bool = False
    ) -> Any:
        """Send to the one subscriber of the message's type and wait for its answer.

        ``here``: the asker waits as long as it takes and is itself an actor, in the
        runtime's task group (the reviewer asking a stage for its turn). When the actor has
        no mailbox open, the message then runs on the asker's task (see :meth:`_ask_here`)."""
        routes = self._routes.get(type(message), [])
        if len(routes) != 1:
            raise ReverieError(f"{type(message).__name__} needs exactly one subscriber")
        kind, factory = routes[0]
        reply = Reply()
        envelope = Envelope(message, reply=reply)
        budget = math.inf if here else timeout_s or self._settings.ask_timeout_s
        if here and (kind, message.namespace) not in self._mailboxes:
            return await self._ask_here(kind, factory, envelope)
        await self._deliver(kind, factory, envelope)
        try:
            if budget == math.inf:  # the asker waits as long as it takes (no scope to run)
                return await reply.wait()
            with anyio.fail_after(budget):
                return await reply.wait()
        except builtins.TimeoutError:
            withdrawn = reply.abandon(ClosedError("the asker gave up"))
            what = type(message).__name__
            raise TimeoutError(
                f"{kind} gave no answer to {what} within {budget:g} s; "
                + (
                    "it was withdrawn before it started: nothing was written"
                    if withdrawn
                    else "it had started and may still be applied"
                ),
                withdrawn=withdrawn,
            ) from None
        except BaseException:  # cancelled: an ask not yet taken up is withdrawn whole
            reply.abandon(ClosedError("the asker was cancelled"))
            raise

    def offer(self, message: Message, *, cause: Envelope | None = None) -> int:
        """Tell without waiting: a subscriber whose mailbox is full (or that is disabled, or
        a runtime that is closing) does not get it. For messages whose work is recorded
        elsewhere too (an outbox row), so that the sender never waits on the receiver.
        Returns how many actors it reached."""
        if self._closed:
            return 0
        reached = 0
        for kind, factory in self._routes.get(type(message), []):
            envelope = Envelope(message, cause_id=cause.id if cause else None)
            key = (kind, message.namespace)
            box = self._mailbox(kind, factory, envelope)
            if box is None:
                continue
            box.pending += 1
            try:
                box.send.send_nowait(envelope)
            except anyio.WouldBlock:
                box.pending -= 1
                if box.pending == 0:
                    self._retire(key, box)
                continue
            reached += 1
        return reached

    def _mailbox(
        self, kind: str, factory: ActorFactory, envelope: Envelope, *, spawn: bool = True
    ) -> _Mailbox | None:
        """The actor's mailbox for the envelope's namespace, its actor made when new (and
        started on a task of its own unless ``spawn`` is False: the caller runs it); None
        when the actor is disabled (an ask is failed so)."""
        key = (kind, envelope.message.namespace)
        box = self._mailboxes.get(key)
        if box is not None:
            return box
        actor = factory(envelope.message.namespace)
        if not actor.enabled:
            if envelope.reply is not None:
                envelope.reply.fail(ActorDisabled(f"{kind} is disabled by configuration"))
            return None
        box = _Mailbox(actor, self._settings.mailbox_size)
        self._mailboxes[key] = box
        if self._idle.is_set():
            self._idle = anyio.Event()
        if spawn:
            self._tg.start_soon(self._run, kind, key, box)
        return box

    async def _ask_here(self, kind: str, factory: ActorFactory, envelope: Envelope) -> Any:
        """The ask runs on the asker's task: no task to spawn, no mailbox round trip (four
        of them a review pass). Everything else is the bus's as for any message: the
        actor's kill switch, ``on_start`` / ``on_stop``, its span, budget and fail-silent
        handling. Its mailbox is open meanwhile, so what others send the actor queues
        behind the ask (and ``wait_idle`` waits for it); what queued is handed to a task of
        the actor's own after it, in order. The asker's cancellation cancels the work, as
        nothing but the asker waits for it."""
        self._refuse_when_closed()
        key = (kind, envelope.message.namespace)
        box = self._mailbox(kind, factory, envelope, spawn=False)
        reply = envelope.reply
        assert reply is not None
        if box is None:
            return await reply.wait()
        box.pending += 1
        box.asks.append(reply)
        started = False
        try:
            if _overrides(box.actor, "on_start"):
                await box.actor.on_start()
            started = True
            await self._handle(kind, box.actor, envelope)
        finally:
            _handled(box, envelope)
            if box.pending and started:  # others sent meanwhile: the actor's own task
                self._tg.start_soon(self._run, kind, key, box, True)
            else:
                await self._stop(kind, key, box)
        return await reply.wait()

    def _refuse_when_closed(self) -> None:
        if self._closed:
            raise ClosedError("the runtime is closing; no new messages are accepted")

    async def _deliver(self, kind: str, factory: ActorFactory, envelope: Envelope) -> None:
        self._refuse_when_closed()
        key = (kind, envelope.message.namespace)
        box = self._mailbox(kind, factory, envelope)
        if box is None:
            return
        box.pending += 1
        if envelope.reply is not None:
            box.asks.append(envelope.reply)
        try:
            await box.send.send(envelope)
        except BaseException:  # cancelled before it was sent: it never counts
            box.pending -= 1
            if box.pending == 0:  # its actor may already wait for it: end that mailbox
                self._retire(key, box)
            raise

    def _retire(self, key: tuple[str, str], box: _Mailbox) -> None:
        """No message is on its way to ``box``: a new message gets a new mailbox, and the
        actor waiting on this one sees its end and stops."""
        if self._mailboxes.get(key) is box:
            del self._mailboxes[key]
        box.close(receiving=False)

    async def _run(
        self, kind: str, key: tuple[str, str], box: _Mailbox, started: bool = False
    ) -> None:
        """The actor's own task: ``on_start`` (unless an ask here ``started`` it), then its
        mailbox until empty."""
        try:
            if not started and _overrides(box.actor, "on_start"):
                await box.actor.on_start()
            while box.pending:
                try:
                    envelope = await box.receive.receive()
                except anyio.EndOfStream:  # retired: the last message was never sent
                    break
                try:
                    await self._handle(kind, box.actor, envelope)
                finally:
                    _handled(box, envelope)
        finally:
            await self._stop(kind, key, box)

    async def _stop(self, kind: str, key: tuple[str, str], box: _Mailbox) -> None:
        """The mailbox is empty (or its actor was cancelled): it goes, asks still listed are
        failed, the actor's ``on_stop`` runs shielded."""
        if self._mailboxes.get(key) is box:
            del self._mailboxes[key]
        box.close()
        for reply in box.asks:
            reply.fail(ClosedError(f"{kind} stopped before answering"))
        if _overrides(box.actor, "on_stop"):
            with anyio.CancelScope(shield=True):
                try:
                    await box.actor.on_stop()
                except Exception as exc:  # fail-silent: never raise into the host
                    log.warning("actor_stop_failed", actor=kind, error=repr(exc))
        if not self._mailboxes:
            self._idle.set()

    async def _handle(self, kind: str, actor: Actor, envelope: Envelope) -> None:
        """One message in the actor's span (a child of the sender's), within its budget; a
        failure is logged, counted, on the span and the asker's, never raised here. The
        span is started and made current by hand: the context managers that would do it
        cost more than the rest of an ask to an idle stage."""
        message = envelope.message
        span = self._tracer.start_span(
            f"reverie.{kind} {type(message).__name__}",
            context=envelope.context,
            attributes=_span_attributes(kind, envelope),
        )
        token = otel_context.attach(trace.set_span_in_context(span, envelope.context))
        try:
            if envelope.reply is not None and not envelope.reply.take():
                span.set_attribute("reverie.withdrawn", True)  # its asker gave up
                return
            try:
                result = await _within_budget(kind, actor, envelope)
            except Exception as exc:
                await self._failed(kind, actor, envelope, span, exc)
            else:
                if envelope.reply is not None:
                    envelope.reply.set(result)
        finally:
            otel_context.detach(token)
            span.end()

    async def _failed(
        self, kind: str, actor: Actor, envelope: Envelope, span: trace.Span, exc: Exception
    ) -> None:
        """Fail-silent: the failure counted, on the span and in the log; the asker gets it
        as reverie's error; the actor's ``on_failure`` runs."""
        self.failures += 1
        error = bounded(repr(exc))
        span.add_event(
            "exception", {"exception.type": type(exc).__name__, "exception.message": error}
        )
        span.set_status(Status(StatusCode.ERROR, error))
        message = envelope.message
        log.error(
            "actor_failed",
            actor=kind,
            namespace=message.namespace,
            message=type(message).__name__,
            error=error,
        )
        if envelope.reply is not None:  # the asker only ever sees reverie's tree
            envelope.reply.fail(as_reverie_error(exc))
        try:
            await actor.on_failure(envelope, exc)
        except Exception as again:
            log.error("actor_on_failure_failed", actor=kind, error=repr(again))

    def subscriptions(self) -> list[tuple[str, str]]:
        """Who receives what: (message type, actor) pairs, in subscription order."""
        return [(t.__name__, kind) for t, routes in self._routes.items() for kind, _ in routes]

    async def wait_idle(self) -> None:
        """Until no actor has pending work (messages sent meanwhile are waited for too)."""
        while self._mailboxes:
            await self._idle.wait()
        await anyio.lowlevel.checkpoint()

    async def close(self) -> None:
        """Refuse new messages, let mailboxes drain within the drain timeout."""
        self._closed = True
        with anyio.move_on_after(self._settings.drain_timeout_s or math.inf):
            await self.wait_idle()
