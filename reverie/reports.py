"""What a review pass reports, typed: each stage's details, a stage's report, a namespace's
pass and a round over every namespace. Frozen records the reviewer and its stages pass
around; the public API hands out :meth:`to_dict` of them, the plain JSON-able dicts it
always returned (``Reverie.review``, ``Namespace.review``).

A low-level module: it imports nothing of reverie, so the bus, the actors and the facade
may all use it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from reverie.frozen import quick_init

StageStatus: TypeAlias = Literal[
    "ran", "not_due", "disabled", "over_budget", "failed", "breaker", "deferred"
]
"""A stage's turn in a pass: it ran, was not due, is switched off, overran its budget, or
failed; the linter's round may also end on its breaker or a deferred model answer."""

TopicStatus: TypeAlias = Literal["distilled", "deferred", "rejected", "failed", "over_budget"]
Verdict: TypeAlias = Literal["promoted", "skip", "deferred", "deferred_budget"]


class _Round:
    """A stage's round that ran, leaving nothing for the next (what a details type says
    unless it knows better)."""

    __slots__ = ()

    @property
    def status(self) -> StageStatus:
        return "ran"

    @property
    def retry_next_round(self) -> bool:
        return False


@quick_init
@dataclass(frozen=True, slots=True)
class LinterDetails(_Round):
    """The linter's round: conflicts found (``new`` of them recorded for the first time),
    pairs the rules left unclear, whether the breaker ended it, and why the model deferred."""

    conflicts: int
    new: int
    unclear: int
    breaker: bool
    deferred: str | None

    @property
    def status(self) -> StageStatus:
        return "breaker" if self.breaker else "deferred" if self.deferred else "ran"

    def detail(self) -> dict[str, Any]:
        """The round's ledger detail (the report without its status)."""
        return {
            "conflicts": self.conflicts,
            "new": self.new,
            "unclear": self.unclear,
            "breaker": self.breaker,
            "deferred": self.deferred,
        }

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, **self.detail()}


@quick_init
@dataclass(frozen=True, slots=True)
class TopicResult:
    """One topic's outcome in a distiller round. ``ts`` and the summary's ``facts``,
    ``chars``, ``watermark`` and ``by`` are set when it was distilled; ``reason`` when it
    was deferred or rejected; ``error`` when it failed; tokens unless it failed or was over
    the round's budget."""

    topic: str
    status: TopicStatus
    ts: str | None = None
    error: str | None = None
    reason: str | None = None
    facts: int | None = None
    chars: int | None = None
    watermark: int | None = None
    by: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.ts is None else {"ts": self.ts}
        out["topic"], out["status"] = self.topic, self.status
        for key in _TOPIC_OPTIONAL:
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


_TOPIC_OPTIONAL = (
    "error",
    "reason",
    "facts",
    "chars",
    "watermark",
    "by",
    "input_tokens",
    "output_tokens",
)


@quick_init
@dataclass(frozen=True, slots=True)
class DistillerDetails:
    """The distiller's round: how many topics it distilled, how many wait for the next
    round, and each topic's outcome."""

    distilled: int
    retry_next_round: int
    topics: tuple[TopicResult, ...]
    recalled: tuple[str, ...] = ()
    """The long-term records recalled into the round's context (seed 004)."""

    @property
    def status(self) -> StageStatus:
        return "ran"

    def to_dict(self) -> dict[str, Any]:
        return {
            "distilled": self.distilled,
            "retry_next_round": self.retry_next_round,
            "topics": [topic.to_dict() for topic in self.topics],
            **({"recalled": list(self.recalled)} if self.recalled else {}),
        }


@quick_init
@dataclass(frozen=True, slots=True)
class PromotionOutcome:
    """One candidate fact's outcome, as logged to promotions.jsonl: the rewrite proposed,
    why it was skipped or deferred, and the MEMORY.md entry it became."""

    fact_id: str
    chain_id: str
    topic: str
    content: str
    depth: int
    verdict: Verdict
    rewrite: str | None = None
    reason: str | None = None
    entry_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "fact_id": self.fact_id,
            "chain_id": self.chain_id,
            "topic": self.topic,
            "content": self.content,
            "depth": self.depth,
            "verdict": self.verdict,
        }
        optional = (("rewrite", self.rewrite), ("reason", self.reason), ("entry_id", self.entry_id))
        out.update((key, value) for key, value in optional if value is not None)
        return out


@quick_init
@dataclass(frozen=True, slots=True)
class PromoterDetails(_Round):
    """The promoter's round: its candidates, how many got each verdict (in the order the
    verdicts first came), and each candidate's outcome."""

    candidates: int
    counts: tuple[tuple[Verdict, int], ...]
    outcomes: tuple[PromotionOutcome, ...]

    @classmethod
    def of(cls, candidates: int, outcomes: list[PromotionOutcome]) -> PromoterDetails:
        counts: dict[Verdict, int] = {}
        for outcome in outcomes:
            counts[outcome.verdict] = counts.get(outcome.verdict, 0) + 1
        return cls(candidates, tuple(counts.items()), tuple(outcomes))

    @property
    def by_verdict(self) -> dict[str, int]:
        return dict(self.counts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidates": self.candidates,
            **self.by_verdict,
            "outcomes": [outcome.to_dict() for outcome in self.outcomes],
        }


@quick_init
@dataclass(frozen=True, slots=True)
class CuratorCandidate:
    """An agent-built skill idle long enough to be archived."""

    name: str
    idle_since: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "idle_since": self.idle_since}


@quick_init
@dataclass(frozen=True, slots=True)
class CuratorArchived:
    """A skill the curator's pass archived, idle past ``skill_scores.archive_days``
    (reversible: ``reverie curator --restore NAME``)."""

    name: str
    archive_dir: str
    idle_since: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "archive_dir": self.archive_dir, "idle_since": self.idle_since}


@quick_init
@dataclass(frozen=True, slots=True)
class BloatIssue:
    """A skill over the size budget (report only)."""

    name: str
    chars: int
    limit: int
    kind: Literal["bloat"] = "bloat"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "chars": self.chars, "limit": self.limit}


@quick_init
@dataclass(frozen=True, slots=True)
class OverlapIssue:
    """Two skills much alike (report only)."""

    names: tuple[str, str]
    similarity: float
    kind: Literal["overlap"] = "overlap"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "names": list(self.names), "similarity": self.similarity}


SkillIssue: TypeAlias = BloatIssue | OverlapIssue


@quick_init
@dataclass(frozen=True, slots=True)
class CuratorDetails(_Round):
    """The curator's dry run: the candidates it would archive and the skills it reports."""

    candidates: tuple[CuratorCandidate, ...]
    issues: tuple[SkillIssue, ...]
    dry_run: bool = True
    archived: tuple[CuratorArchived, ...] = ()
    """Skills idle ``skill_scores.archive_days`` or more, archived by the pass itself."""

    def to_dict(self) -> dict[str, Any]:
        found = {
            "candidates": [candidate.to_dict() for candidate in self.candidates],
            "issues": [issue.to_dict() for issue in self.issues],
            "dry_run": self.dry_run,
        }
        if self.archived:  # said only when the pass archived something
            found["archived"] = [a.to_dict() for a in self.archived]
        return found


@quick_init
@dataclass(frozen=True, slots=True)
class DreamDetails(_Round):
    """A dream (seed 004): its record (what it read, recalled, learnt and measured; the
    reports are rendered from it) and where its files went (none on a dry run)."""

    run: Mapping[str, Any]
    files: tuple[str, ...] = ()
    brief: bool = False
    """In a review pass's report, the dream's gist (its record is in the ledger)."""

    def to_dict(self) -> dict[str, Any]:
        if not self.brief:
            return {**self.run, "files": list(self.files)}
        keys = ("date", "slot", "timezone", "evening", "next_due", "dry_run")
        learnt = self.run["learnt"]
        return {
            **{key: self.run[key] for key in keys},
            "health": self.run["health"]["score"],
            "insights": len(learnt["insights"]),
            "actions": len(learnt["actions"]),
            "recalled": len(self.run["recalled"]),
            "files": list(self.files),
        }


@quick_init
@dataclass(frozen=True, slots=True)
class SynthesisOutcome:
    """One synthesis of the profiler's round (``target`` user or soul): ``written`` (a new
    or replacing entry), ``unchanged``, ``removed`` (no live source left), ``no_room``,
    ``no_sources`` or ``refused`` (the writer said no: ``reason``); ``author`` rules or
    model, and why the model's version was not kept (``model_refused``)."""

    target: str
    outcome: str
    entry_id: str | None = None
    chars: int = 0
    clauses: int = 0
    author: str = "rules"
    reason: str | None = None
    model_refused: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "outcome": self.outcome,
            "entry_id": self.entry_id,
            "chars": self.chars,
            "clauses": self.clauses,
            "author": self.author,
            "reason": self.reason,
            "model_refused": self.model_refused,
        }


@quick_init
@dataclass(frozen=True, slots=True)
class ProfilerDetails(_Round):
    """The profiler's round: the user profile's and the self-model's outcomes."""

    syntheses: tuple[SynthesisOutcome, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            **{s.target: s.outcome for s in self.syntheses},
            "syntheses": [s.to_dict() for s in self.syntheses],
        }


StageDetails: TypeAlias = (
    LinterDetails
    | DistillerDetails
    | PromoterDetails
    | CuratorDetails
    | ProfilerDetails
    | DreamDetails
)


@quick_init
@dataclass(frozen=True, slots=True)
class StageReport:
    """One stage's turn in a pass. ``details`` is what the stage did when it ran;
    ``next_due`` is when it is next due when it was not due (None: due now); ``error`` is
    why it failed. ``status`` may be ``failed`` with details kept: the stage ran, and its
    deferred write failed in the pass's closing transaction."""

    stage: str
    status: StageStatus
    details: StageDetails | None = None
    next_due: str | None = None
    error: str | None = None

    @classmethod
    def ran(cls, stage: str, details: StageDetails) -> StageReport:
        return cls(stage, details.status, details)

    @property
    def retry_next_round(self) -> bool:
        """Whether it left work for the next round (the distiller's topics not done)."""
        return self.details is not None and bool(self.details.retry_next_round)

    def failed(self, error: str) -> StageReport:
        """This report, marked failed (its details kept)."""
        return StageReport(self.stage, "failed", self.details, self.next_due, error)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"stage": self.stage}
        if self.details is not None:
            out.update(self.details.to_dict())
        out["status"] = self.status  # in the details' place when they have one
        if self.details is None and self.status == "not_due":
            out["next_due"] = self.next_due
        if self.error is not None:
            out["error"] = self.error
        return out


@quick_init
@dataclass(frozen=True, slots=True)
class NamespaceReport:
    """One namespace's review pass. A pass that did not begin (cooling down, quiet,
    another process's lease, the reviewer off) has only its ``reason``; one that ran has
    its stages in order, its duration and its rendering for a host (``text``)."""

    namespace: str
    ran: bool
    force: bool
    reason: str | None = None
    stages: tuple[StageReport, ...] = ()
    duration_ms: float = 0.0

    @property
    def text(self) -> str:
        """The pass rendered for a host (see :func:`render`); "" when it did not run."""
        return (
            render(self.namespace, [stage.to_dict() for stage in self.stages]) if self.ran else ""
        )

    def stage(self, name: str) -> StageReport:
        """The report of stage ``name`` (KeyError when the pass has none)."""
        for report in self.stages:
            if report.stage == name:
                return report
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"namespace": self.namespace, "ran": self.ran, "force": self.force}
        if self.reason is not None:
            out["reason"] = self.reason
        if self.ran:
            stages = [stage.to_dict() for stage in self.stages]
            out["stages"] = stages
            out["duration_ms"] = self.duration_ms
            out["text"] = render(self.namespace, stages)  # from the dicts made once
        return out


def render(namespace: str, stages: list[dict[str, Any]]) -> str:
    """A pass as text a host may show the agent, marked so the extractor never takes it for
    something the conversation said: each stage's status and its scalar details, in the
    order of its report's dict (``stages``: the stage reports' dicts)."""
    lines = [f'<reverie-report namespace="{namespace}">']
    for stage in stages:
        details = ", ".join(
            f"{key}={value}"
            for key, value in stage.items()
            if key not in {"stage", "status"} and isinstance(value, (int, str))
        )
        lines.append(f"{stage['stage']}: {stage['status']}" + (f" ({details})" if details else ""))
    lines.append("</reverie-report>")
    return "\n".join(lines)


@quick_init
@dataclass(frozen=True, slots=True)
class RoundReport:
    """A review round over every namespace, in the order the home lists them; ``reason``
    when there was nothing to review."""

    ran: bool
    force: bool
    namespaces: tuple[NamespaceReport, ...]
    reason: str | None = None

    @classmethod
    def of(
        cls, force: bool, reports: Mapping[str, NamespaceReport], names: list[str]
    ) -> RoundReport:
        return cls(
            ran=any(report.ran for report in reports.values()),
            force=force,
            namespaces=tuple(reports[name] for name in names),
            reason=None if names else "nothing stored yet",
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ran": self.ran,
            "force": self.force,
            "namespaces": [report.to_dict() for report in self.namespaces],
        }
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@quick_init
@dataclass(frozen=True, slots=True)
class FlushOutcome:
    """What one flush (L3) did: its span's attributes and its ledger row's detail."""

    trigger: str
    candidates: int
    memory_adds: int
    topic_saves: int
    noops: int
    refused: int
    skipped: int
    left_for_next: int
    deferred: str | None
    asked_model: int
    watermark: int
    skipped_because: tuple[tuple[str, int], ...]
    """Why candidates were skipped, with how many each (sorted by reason)."""
    flagged: int
    """Candidates that gave the agent an instruction: never stored, flagged in the ledger."""
    over_budget: int = 0
    """Of those left for the next flush, the ones its budget left (not a failed write)."""

    def attributes(self) -> dict[str, str | int]:
        """The span attributes (and log fields) of the flush."""
        return {
            "reverie.flush.trigger": self.trigger,
            "reverie.flush.candidates": self.candidates,
            "reverie.flush.memory_adds": self.memory_adds,
            "reverie.flush.topic_saves": self.topic_saves,
            "reverie.flush.noops": self.noops,
            "reverie.flush.refused": self.refused,
            "reverie.flush.skipped": self.skipped,
            "reverie.flush.left_for_next": self.left_for_next,
            "reverie.flush.over_budget": self.over_budget,
            "reverie.flush.deferred": self.deferred or "",
            "reverie.flush.asked_model": self.asked_model,
            "reverie.flush.watermark": self.watermark,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            **{k.removeprefix("reverie.flush."): v for k, v in self.attributes().items()},
            "deferred": self.deferred,
            "skipped_because": dict(self.skipped_because),
            "flagged": self.flagged,
        }
