"""The messages that travel on the bus: frozen, typed, one class per event or request."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import anyio
from opentelemetry import context as otel_context

from reverie.commands import Command
from reverie.frozen import quick_init

_ids = itertools.count(1)


@quick_init
@dataclass(frozen=True, slots=True)
class Message:
    """Every message belongs to one namespace, the isolation boundary."""

    namespace: str


@quick_init
@dataclass(frozen=True, slots=True)
class TurnEnded(Message):
    session_id: str
    episode_id: int
    turn: int


@quick_init
@dataclass(frozen=True, slots=True)
class SessionIdle(Message):
    session_id: str


@quick_init
@dataclass(frozen=True, slots=True)
class PreCompact(Message):
    session_id: str


@quick_init
@dataclass(frozen=True, slots=True)
class FlushBacklog(Message):
    """A flush left statements waiting for its budget: the flusher flushes again, as its
    next message (with a time budget of its own), ``rounds`` more times at most."""

    session_id: str
    rounds: int


@quick_init
@dataclass(frozen=True, slots=True)
class SessionEnded(Message):
    session_id: str


@quick_init
@dataclass(frozen=True, slots=True)
class ReviewDue(Message):
    force: bool = False


@quick_init
@dataclass(frozen=True, slots=True)
class StageDue(Message):
    """The reviewer asks one review stage to run if it is due (an ask; the reply is a
    :class:`~reverie.bus.replies.StageOutcome`). ``last_run`` is the stage's last run as
    the pass read it when it began (``known``); a stage not told reads it itself.
    ``in_pass``: writes that nothing later in the pass reads come back in the outcome, for
    the pass's closing transaction. ``look``: what the stage looks at, read for it in the
    pass's first read (``looked``); a stage not given it reads it itself."""

    last_run: str | None = None
    known: bool = False
    in_pass: bool = True
    look: Any = None
    looked: bool = False


@quick_init
@dataclass(frozen=True, slots=True)
class LintDue(StageDue):
    """L5, the linter's turn in a pass."""


@quick_init
@dataclass(frozen=True, slots=True)
class DistillDue(StageDue):
    """L4, the distiller's turn in a pass."""


@quick_init
@dataclass(frozen=True, slots=True)
class PromoteDue(StageDue):
    """L6, the promoter's turn in a pass; ``refresh``: asks to refresh promoted rules are
    pending (their message was lost to a crash, or the promoter was busy)."""

    refresh: bool = False


@quick_init
@dataclass(frozen=True, slots=True)
class CurateDue(StageDue):
    """L7, the curator's dry run in a pass."""


@quick_init
@dataclass(frozen=True, slots=True)
class ProfileDue(StageDue):
    """The weekly profile and self-model synthesis's turn in a pass (USER.md, SOUL.md)."""


class DreamDue(StageDue):
    """Seed 004's dream cycle, last in a pass: due at each of the day's slots."""


REVIEW_ORDER: tuple[tuple[str, type[StageDue]], ...] = (
    ("linter", LintDue),
    ("distiller", DistillDue),
    ("promoter", PromoteDue),
    ("curator", CurateDue),
    ("profiler", ProfileDue),
    ("dreamer", DreamDue),
)
"""The seed's order of a pass (L5 → L4 → L6 → L7), the weekly profile synthesis, then seed
004's dream: each stage by its actor's name."""


@quick_init
@dataclass(frozen=True, slots=True)
class PromotedFactChanged(Message):
    """The writer corrected (or restored) a fact whose chain was promoted into MEMORY.md:
    the promoter refreshes that rule. Sent after the write's commit; the ask itself is a
    row the write committed (``review_state.REFRESH``), so a crash between the commit and
    the message only delays the refresh to the promoter's next turn."""

    chain_id: str


@quick_init
@dataclass(frozen=True, slots=True)
class ToolCall(Message):
    """A validated in-session tool call for the writer (an ask: the reply is the result)."""

    session_id: str | None
    command: Command
    actor: str = "writer"
    call_id: str | None = None  # the host's id for the call: its answer is kept, replayed


@quick_init
@dataclass(frozen=True, slots=True)
class TurnRecord(Message):
    """A session turn to record as an episode (an ask: the reply is the Episode)."""

    session_id: str
    user: str | None
    assistant: str | None


@quick_init
@dataclass(frozen=True, slots=True)
class CallLookup(Message):
    """What a named tool call answered, if it committed (an ask, queued behind the writes
    sent before it, so a call still in flight is decided before it is looked up)."""

    call_id: str


@quick_init
@dataclass(frozen=True, slots=True)
class Restore(Message):
    """Bring a removed / replaced entry (or an earlier fact value) back (an ask)."""

    entry_id: str


@quick_init
@dataclass(frozen=True, slots=True)
class SkillUsed(Message):
    """The host reports that the agent used a skill (an ask), and how it went: ``success``,
    ``failure`` or ``unknown`` (the host did not say)."""

    session_id: str | None
    name: str
    outcome: str = "unknown"


@quick_init
@dataclass(frozen=True, slots=True)
class PinSkill(Message):
    """Pin (or unpin) a skill: a pinned skill is never curated (an ask)."""

    name: str
    pinned: bool = True


@quick_init
@dataclass(frozen=True, slots=True)
class Curate(Message):
    """Archive the curator's candidates (``apply``), or restore one archived skill."""

    apply: bool = False
    restore: str | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class Dream(Message):
    """Dream now, due or not (``ns.dream()``, ``reverie dream``); ``dry_run``: work it all
    out and write nothing."""

    dry_run: bool = False


@quick_init
@dataclass(frozen=True, slots=True)
class Noted(Message):
    """The extractor found a correction or an error in a turn: the learner logs it (seed
    003's ``correction`` and ``error`` triggers)."""

    session_id: str


@quick_init
@dataclass(frozen=True, slots=True)
class PatternDetected(Message):
    """Seed 003's ``pattern-detected`` trigger: these log records (ids, oldest first) tell
    one lesson seen in enough sessions; the learner makes or extends their pattern."""

    examples: tuple[str, ...]


@quick_init
@dataclass(frozen=True, slots=True)
class RecordsDue(Message):
    """Rewrite the namespace's record files now (``reverie reindex``; an ask)."""


@quick_init
@dataclass(frozen=True, slots=True)
class AccessesDue(Message):
    """Reads have counted ``records.access_batch`` accesses: the learner writes them."""


@quick_init
@dataclass(frozen=True, slots=True)
class Learn(Message):
    """Seed 003's ``manual`` trigger: a learning said by hand (an ask)."""

    kind: str
    content: str
    priority: str


@quick_init
@dataclass(frozen=True, slots=True)
class MoveRecord(Message):
    """Move a record by hand (an ask): ``tier`` to set it to, or ``raise_priority``."""

    record_id: str
    tier: str | None = None
    raise_priority: bool = False
    why: str = "by hand"


@quick_init
@dataclass(frozen=True, slots=True)
class GraphDue(Message):
    """Bring the namespace's M-FLOW graph up to date now and project it (an ask; the
    answer is how many nodes and edges were added or changed). The builds on idle and at a
    session's end only mark the files stale: rewriting them whole is the dear part.
    ``rebuild``: from scratch.
    ``refine``: then let a configured model name new episodes' entities and facets (the
    dream cycle's ask; a search and ``reindex`` ask without: a read never calls a model)."""

    rebuild: bool = False
    refine: bool = True
    project: bool = True
    """Then write ``<ns>/graph/`` if anything changed since it was last written (a search
    asks without: the files are written at a dream or when asked, never per search)."""


class Reply:
    """The answer slot of an ask: set once, by the actor, with a value or an error.

    An asker that gives up (cancelled, timed out) *abandons* it: if the actor had not taken
    the ask up yet, it never will, so the asker knows its request was withdrawn whole."""

    __slots__ = ("_done", "_event", "_value", "_error", "started")

    def __init__(self) -> None:
        self._done = False
        self._event: anyio.Event | None = None  # made only for an asker that must wait
        self._value: Any = None
        self._error: BaseException | None = None
        self.started = False

    def take(self) -> bool:
        """The actor takes the ask up; False when its asker abandoned it first (skip it)."""
        if self._done:
            return False
        self.started = True
        return True

    def abandon(self, error: BaseException) -> bool:
        """The asker gives up; True when the ask was withdrawn before the actor took it up
        (it will never run), False when it is running or ran (it may have landed)."""
        if self.started:
            return False
        self.fail(error)
        return True

    def set(self, value: Any) -> None:
        if not self._done:
            self._value = value
            self._settle()

    def fail(self, error: BaseException) -> None:
        if not self._done:
            self._error = error
            self._settle()

    def _settle(self) -> None:
        self._done = True
        if self._event is not None:
            self._event.set()

    @property
    def done(self) -> bool:
        return self._done

    async def wait(self) -> Any:
        """The answer; an ask answered already (run on the asker's own task) costs no
        event and no wait."""
        if not self._done:
            if self._event is None:
                self._event = anyio.Event()
            await self._event.wait()
        if self._error is not None:
            raise self._error
        return self._value


@quick_init
@dataclass(frozen=True, slots=True)
class Envelope:
    """A message in transit: its id, its cause's id, the span context it was sent under."""

    message: Message
    id: int = field(default_factory=lambda: next(_ids))
    cause_id: int | None = None
    context: otel_context.Context = field(default_factory=otel_context.get_current)
    reply: Reply | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class ReshapeSkills(Message):
    """The curator's proposals for agent-made skills (an ask): ``consolidate`` overlapping
    ones into one, or ``patch`` (trim) bloated ones; ``apply`` carries them out."""

    kind: str
    apply: bool = False


@quick_init
@dataclass(frozen=True, slots=True)
class UndoReshape(Message):
    """Undo the last ``merge`` or ``trim`` of one skill, by its name (an ask)."""

    name: str
    change: str
