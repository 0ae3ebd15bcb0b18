"""What an import did, line by line: :class:`LineDecision` and :class:`ImportReport`."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Final

ERROR: Final = "ERROR"


@dataclass(frozen=True, slots=True)
class LineDecision:
    """One line (or one note of a Markdown file) and what became of it: ``decision`` is
    the writer's (ADD, NOOP, SUPERSEDE, …) or ERROR; ``id`` the record it made or matched;
    ``source`` the file it came from when an import reads several."""

    line: int
    decision: str
    id: str | None
    reason: str
    source: str | None = None


@dataclass(frozen=True, slots=True)
class ImportReport:
    """An import's decisions, in the order of its input. ``mode`` is ``restore`` (an
    export written back into an empty namespace as it was) or ``merge`` (each record
    through the writer's rules)."""

    source: str
    format: str
    mode: str
    decisions: tuple[LineDecision, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = ()

    @property
    def counts(self) -> dict[str, int]:
        """How many lines got each decision."""
        return dict(sorted(Counter(d.decision for d in self.decisions).items()))

    @property
    def errors(self) -> list[LineDecision]:
        return [d for d in self.decisions if d.decision == ERROR]

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "format": self.format,
            "mode": self.mode,
            "counts": self.counts,
            "notes": list(self.notes),
            "decisions": [asdict(d) for d in self.decisions],
        }
