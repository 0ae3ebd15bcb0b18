"""The typed requests a validated tool call becomes (see :mod:`reverie.tools`), as they
travel to the writer on the bus: plain data, below the tools, the bus and the actors."""

from __future__ import annotations

from dataclasses import dataclass

from reverie.frozen import quick_init


@quick_init
@dataclass(frozen=True, slots=True)
class MemoryCommand:
    action: str
    target: str
    content: str | None
    old_text: str | None
    dedupe: bool = True
    """Refuse a near-duplicate of a live entry as a NOOP. Off only for a synthesis that
    quotes other entries by design (the profiler's): then only an exact repeat is a NOOP.
    Not a tool argument."""


@quick_init
@dataclass(frozen=True, slots=True)
class TopicCommand:
    action: str
    topic: str | None
    content: str | None
    formerly: tuple[str, ...] = ()
    """What the flush collapsed into this save (said before it in the session): indexed
    with the fact, never stored as facts of their own. Not a tool argument."""


@quick_init
@dataclass(frozen=True, slots=True)
class SkillCommand:
    action: str
    name: str
    content: str
    old_text: str | None


Command = MemoryCommand | TopicCommand | SkillCommand
