"""The bus: actors spun up on demand and gone when idle, bounded mailboxes, fail-silent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from structlog.testing import capture_logs

from reverie.bus.actor import Actor
from reverie.bus.bus import ActorDisabled, Bus
from reverie.bus.messages import Envelope, Message
from reverie.config import ActorConfig
from reverie.errors import ClosedError, InternalError
from tests.conftest import both_backends

pytestmark = both_backends


@dataclass(frozen=True, slots=True)
class Ping(Message):
    value: int = 0


class Recorder(Actor):
    name = "recorder"
    handles = (Ping,)
    log: list[tuple[str, Any]] = []
    gate: anyio.Event | None = None
    entered: list[int] = []  # each message's value as its handling begins (before the gate)
    switch_on = True

    @property
    def enabled(self) -> bool:
        return Recorder.switch_on

    async def on_start(self) -> None:
        Recorder.log.append(("start", self.namespace))

    async def on_receive(self, envelope: Envelope) -> Any:
        message = envelope.message
        assert isinstance(message, Ping)
        Recorder.entered.append(message.value)
        if Recorder.gate is not None:
            await Recorder.gate.wait()
        if message.value < 0:
            raise ValueError("negative ping")
        Recorder.log.append(("got", message.value))
        return message.value * 2

    async def on_stop(self) -> None:
        Recorder.log.append(("stop", self.namespace))


@pytest.fixture(autouse=True)
def reset() -> None:
    Recorder.log = []
    Recorder.gate = None
    Recorder.entered = []
    Recorder.switch_on = True


def make_bus(tg: Any, spans: tuple[TracerProvider, InMemorySpanExporter], size: int = 4) -> Bus:
    provider, _ = spans
    bus = Bus(tg, ActorConfig(mailbox_size=size, drain_timeout_s=1.0), provider.get_tracer("t"))
    bus.subscribe("recorder", (Ping,), Recorder)
    return bus


async def test_actor_spawns_on_message_and_stops_when_empty(spans: Any) -> None:
    async with anyio.create_task_group() as tg:
        bus = make_bus(tg, spans)
        assert await bus.ask(Ping("a", 1)) == 2
        await bus.tell(Ping("a", 2))
        await bus.wait_idle()
        assert bus.statistics() == {}
        assert await bus.ask(Ping("a", 3)) == 6
        await bus.wait_idle()
    starts = [x for x in Recorder.log if x[0] == "start"]
    stops = [x for x in Recorder.log if x[0] == "stop"]
    assert len(starts) == len(stops) >= 2  # gone when idle, spun up again on demand
    assert [x[1] for x in Recorder.log if x[0] == "got"] == [1, 2, 3]


async def test_one_actor_per_namespace_in_order(spans: Any) -> None:
    async with anyio.create_task_group() as tg:
        bus = make_bus(tg, spans, size=100)
        for i in range(20):
            await bus.tell(Ping("a" if i % 2 else "b", i))
        await bus.wait_idle()
    got = [x[1] for x in Recorder.log if x[0] == "got"]
    assert [v for v in got if v % 2] == list(range(1, 20, 2))
    assert [v for v in got if not v % 2] == list(range(0, 20, 2))


async def test_mailbox_is_bounded_and_applies_back_pressure(spans: Any) -> None:
    Recorder.gate = anyio.Event()
    sent = 0
    async with anyio.create_task_group() as tg:
        bus = make_bus(tg, spans, size=2)

        async def producer() -> None:
            nonlocal sent
            for i in range(10):
                await bus.tell(Ping("a", i))
                sent += 1

        tg.start_soon(producer)
        await anyio.wait_all_tasks_blocked()  # the actor on its gate, the producer on a send
        # one message in the actor's hands, two in the mailbox; the producer waits
        assert sent == 3
        assert bus.statistics() == {"recorder:a": 4}
        Recorder.gate.set()
        await bus.wait_idle()
    assert sent == 10


async def test_failure_is_silent_logged_and_on_the_span(spans: Any) -> None:
    _, exporter = spans
    async with anyio.create_task_group() as tg:
        bus = make_bus(tg, spans)
        with capture_logs() as logs:
            await bus.tell(Ping("a", -1))
            await bus.tell(Ping("a", 5))
            await bus.wait_idle()
        with pytest.raises(InternalError, match="negative") as caught:  # only reverie's tree
            await bus.ask(Ping("a", -2))
        assert isinstance(caught.value.__cause__, ValueError)
    assert [x[1] for x in Recorder.log if x[0] == "got"] == [5]
    assert any(e["event"] == "actor_failed" and "negative ping" in e["error"] for e in logs)
    failed = [s for s in exporter.get_finished_spans() if s.status.status_code is StatusCode.ERROR]
    assert len(failed) == 2
    assert failed[0].events[0].name == "exception"
    assert bus.failures == 2


async def test_kill_switch_drops_tells_and_fails_asks(spans: Any) -> None:
    Recorder.switch_on = False
    async with anyio.create_task_group() as tg:
        bus = make_bus(tg, spans)
        await bus.tell(Ping("a", 1))
        with pytest.raises(ActorDisabled):
            await bus.ask(Ping("a", 1))
    assert Recorder.log == []


async def test_close_refuses_new_messages_and_fails_pending_asks(spans: Any) -> None:
    """An ask whose actor is stopped before answering fails with ClosedError (the asker
    lives outside the actors' task group, so only the bus can tell it)."""
    Recorder.gate = anyio.Event()
    outcome: list[BaseException] = []
    async with anyio.create_task_group() as host:
        async with anyio.create_task_group() as actors:
            bus = make_bus(actors, spans)

            async def asker() -> None:
                try:
                    await bus.ask(Ping("a", 1))
                except ClosedError as exc:
                    outcome.append(exc)

            host.start_soon(asker)
            await anyio.wait_all_tasks_blocked()  # the ask is in the actor's hands, on the gate
            await bus.close()  # the drain gives up after 1 s: the actor is stuck on the gate
            with pytest.raises(ClosedError):
                await bus.tell(Ping("a", 2))
            actors.cancel_scope.cancel()
    assert len(outcome) == 1 and "stopped before answering" in str(outcome[0])


async def test_span_per_message_carries_the_senders_trace(spans: Any) -> None:
    provider, exporter = spans
    tracer = provider.get_tracer("host")
    async with anyio.create_task_group() as tg:
        bus = make_bus(tg, spans)
        with tracer.start_as_current_span("host-call") as parent:
            await bus.ask(Ping("a", 1))
    actor_span = next(s for s in exporter.get_finished_spans() if s.name.startswith("reverie."))
    assert actor_span.parent is not None
    assert actor_span.parent.span_id == parent.get_span_context().span_id
    assert actor_span.attributes["reverie.actor"] == "recorder"


async def test_a_message_cancelled_before_it_was_sent_leaves_no_actor_waiting(
    spans: Any,
) -> None:
    """A sender cancelled at its send (after its actor was started and began to wait for
    the message) retires that mailbox: nothing waits for a message that never comes, so
    the bus still goes idle, and the next message gets a mailbox of its own."""
    async with anyio.create_task_group() as tg:
        bus = make_bus(tg, spans)
        with anyio.CancelScope() as scope:
            scope.cancel()
            await bus.tell(Ping("a", 1))
        await anyio.wait_all_tasks_blocked()
        with anyio.fail_after(5):
            await bus.wait_idle()
        assert bus.statistics() == {}
        assert await bus.ask(Ping("a", 2)) == 4
    assert [x[1] for x in Recorder.log if x[0] == "got"] == [2]


async def test_an_offer_never_waits_for_a_full_mailbox(spans: Any) -> None:
    """``offer`` reaches an actor with room and skips one whose mailbox is full, at once."""
    Recorder.gate = anyio.Event()
    async with anyio.create_task_group() as tg:
        bus = make_bus(tg, spans, size=1)
        assert bus.offer(Ping("a", 1)) == 1  # taken up, held at the gate
        await anyio.wait_all_tasks_blocked()
        assert bus.offer(Ping("a", 2)) == 1  # fills the one slot
        assert bus.offer(Ping("a", 3)) == 0  # full: not sent, and no wait
        Recorder.gate.set()
        await bus.wait_idle()
        assert bus.statistics() == {}
    assert [x[1] for x in Recorder.log if x[0] == "got"] == [1, 2]


@dataclass(frozen=True, slots=True)
class Where(Message):
    pass


class Task(Actor):
    """Records the task each message ran on."""

    name = "task"
    handles = (Where,)
    tasks: list[int] = []

    async def on_receive(self, envelope: Envelope) -> Any:
        Task.tasks.append(anyio.get_current_task().id)
        return None


async def test_an_ask_here_runs_on_the_askers_task_with_the_actors_hooks_and_span(
    spans: Any,
) -> None:
    """An ask ``here`` to an actor with no mailbox open runs on the asker's own task (no
    task spawned), yet everything the bus gives an actor is there: ``on_start`` and
    ``on_stop``, its span, and its mailbox gone once it answered."""
    _, exporter = spans
    async with anyio.create_task_group() as tg:
        bus = make_bus(tg, spans)
        bus.subscribe("task", (Where,), Task)
        Task.tasks = []
        await bus.ask(Where("b"))  # a plain ask: on a task of the actor's own
        await bus.ask(Where("b"), here=True)
        assert await bus.ask(Ping("a", 4), here=True) == 8
        assert bus.statistics() == {}  # stopped before the ask returned, no wait_idle
    assert Task.tasks[1] == anyio.get_current_task().id != Task.tasks[0]
    assert Recorder.log == [("start", "a"), ("got", 4), ("stop", "a")]
    names = [s.name for s in exporter.get_finished_spans()]
    assert names == ["reverie.task Where", "reverie.task Where", "reverie.recorder Ping"]


async def test_messages_sent_during_an_ask_here_queue_behind_it_in_order(spans: Any) -> None:
    """What others send the actor while an ask ``here`` runs waits in its mailbox, is
    handled after it in order by a task of the actor's own, with one ``on_start`` and one
    ``on_stop`` for all of them; ``wait_idle`` waits for the ask too."""
    Recorder.gate = anyio.Event()
    answers: list[int] = []
    async with anyio.create_task_group() as tg:
        bus = make_bus(tg, spans)

        async def asker() -> None:
            answers.append(await bus.ask(Ping("a", 1), here=True))

        tg.start_soon(asker)
        await anyio.wait_all_tasks_blocked()  # the ask is on the gate, in the asker's task
        await bus.tell(Ping("a", 2))
        await bus.tell(Ping("a", 3))
        assert bus.statistics() == {"recorder:a": 3}
        idle = anyio.Event()

        async def waiter() -> None:
            await bus.wait_idle()
            idle.set()

        tg.start_soon(waiter)
        await anyio.wait_all_tasks_blocked()
        assert not idle.is_set()  # the ask here holds the mailbox open
        Recorder.gate.set()
        with anyio.fail_after(5):
            await idle.wait()
    assert answers == [2]
    assert Recorder.log == [("start", "a"), ("got", 1), ("got", 2), ("got", 3), ("stop", "a")]


async def test_an_ask_here_cancelled_mid_work_stops_the_actor_and_leaves_the_bus_idle(
    spans: Any,
) -> None:
    """The asker's cancellation is the work's: the actor is stopped (``on_stop`` runs,
    shielded), its mailbox goes, the bus is idle; the next message starts it afresh."""
    Recorder.gate = anyio.Event()
    async with anyio.create_task_group() as tg:
        bus = make_bus(tg, spans)
        with anyio.CancelScope() as scope:
            tg.start_soon(_cancel_when_blocked, scope)
            await bus.ask(Ping("a", 1), here=True)
        assert scope.cancelled_caught
        assert bus.statistics() == {}
        with anyio.fail_after(5):
            await bus.wait_idle()
        Recorder.gate = None
        assert await bus.ask(Ping("a", 2), here=True) == 4
    assert Recorder.log == [
        ("start", "a"),
        ("stop", "a"),
        ("start", "a"),
        ("got", 2),
        ("stop", "a"),
    ]


async def _cancel_when_blocked(scope: anyio.CancelScope) -> None:
    await anyio.wait_all_tasks_blocked()
    scope.cancel()


async def test_an_ask_here_to_a_busy_actor_goes_through_its_mailbox(spans: Any) -> None:
    """With a mailbox open (the actor busy on its own task), an ask ``here`` queues like
    any ask, and its answer comes back in order."""
    Recorder.gate = anyio.Event()
    async with anyio.create_task_group() as tg:
        bus = make_bus(tg, spans)
        await bus.tell(Ping("a", 1))
        answers: list[int] = []

        async def asker() -> None:
            answers.append(await bus.ask(Ping("a", 2), here=True))

        tg.start_soon(asker)
        await anyio.wait_all_tasks_blocked()
        assert bus.statistics() == {"recorder:a": 2}
        assert Recorder.entered == [1]  # the ask waits its turn behind the first message
        Recorder.gate.set()
    assert answers == [4]
    assert [x[1] for x in Recorder.log if x[0] == "got"] == [1, 2]


async def test_an_ask_here_meets_the_kill_switch_the_failure_path_and_a_closed_bus(
    spans: Any,
) -> None:
    async with anyio.create_task_group() as tg:
        bus = make_bus(tg, spans)
        with pytest.raises(InternalError, match="negative"):  # only reverie's tree
            await bus.ask(Ping("a", -1), here=True)
        assert bus.failures == 1 and bus.statistics() == {}
        Recorder.switch_on = False
        with pytest.raises(ActorDisabled):
            await bus.ask(Ping("a", 1), here=True)
        Recorder.switch_on = True
        await bus.close()
        with pytest.raises(ClosedError):
            await bus.ask(Ping("a", 1), here=True)
    assert [x for x in Recorder.log if x[0] == "got"] == []


async def test_a_reply_wakes_an_asker_that_waits_and_answers_one_that_comes_late() -> None:
    """An asker waiting before the answer is woken by it (a value or an error); one asking
    after it gets it at once; a reply is answered once only."""
    from reverie.bus.messages import Reply

    early, failing, got = Reply(), Reply(), {}

    async def wait_for(reply: Reply) -> None:
        try:
            got[id(reply)] = await reply.wait()
        except ClosedError as exc:
            got[id(reply)] = str(exc)

    with anyio.fail_after(10):  # a reply that never wakes its asker fails, not hangs
        async with anyio.create_task_group() as tg:
            tg.start_soon(wait_for, early)
            tg.start_soon(wait_for, failing)
            await anyio.wait_all_tasks_blocked()
            assert got == {} and not early.done
            early.set(7)
            early.set(8)  # answered once only
            failing.fail(ClosedError("stopped"))
    assert got == {id(early): 7, id(failing): "stopped"}
    late = Reply()
    late.fail(ValueError("no"))
    late.set(1)
    with pytest.raises(ValueError, match="no"):
        await late.wait()
