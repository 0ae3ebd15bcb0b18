"""Curator proposals for skills, made by rules: merge overlapping skills into one
(consolidate), and cut a bloated skill's repetition (patch, ``reverie skill trim``).

A merge keeps every section of every original (joined by heading), every line and every
block, except a line said again in the same section, a fenced block said again, and a
paragraph that is a near-duplicate of another (the longer of the two stays). What goes is
listed in the proposal (:class:`Dropped`). A trim does the same to one skill and, while
it is still over the size threshold, shortens the longest sections' prose to each block's
first sentence — whole sentences only."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from reverie.rules.similarity import near_duplicate, normalise, word_set
from reverie.skills.document import Block, Document, Section, parse, render

_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[\w)\]`'\"]{2}[.!?])\s+(?=[A-Z0-9`'\"(\[*_])")
"""Where a sentence ends: after a word of two or more characters ("e.g. x" is one
sentence) and before what begins one."""


@dataclass(frozen=True, slots=True)
class Dropped:
    """A piece of an original that a proposal leaves out, and why."""

    source: str
    section: str
    text: str
    reason: str


@dataclass(frozen=True, slots=True)
class Proposal:
    """One reviewed change: ``consolidate`` (``names`` become ``merged_name``) or ``patch``
    (one skill's body trimmed). ``blocked`` says why it cannot be applied as it stands."""

    kind: str
    names: tuple[str, ...]
    merged_name: str
    why: str
    body: str
    dropped: tuple[Dropped, ...]
    chars_before: int
    chars_after: int
    blocked: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["names"] = list(self.names)
        out["dropped"] = [asdict(d) for d in self.dropped]
        return out


@dataclass(frozen=True, slots=True)
class Member:
    """A skill as a proposal sees it: its name, body, and what orders it (use count, age)."""

    name: str
    body: str
    uses: int
    created_at: str


def groups(members: Sequence[Member], threshold: float) -> list[list[Member]]:
    """Connected groups of the overlap pairs (Jaccard of the bodies' word sets at least
    ``threshold``): A~B and B~C make one group even when A and C do not overlap."""
    parent = list(range(len(members)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    sets = [word_set(m.body) for m in members]
    for i in range(len(members)):
        for j in range(i + 1, len(members)):
            union = sets[i] | sets[j]
            if union and len(sets[i] & sets[j]) / len(union) >= threshold:
                parent[root(j)] = root(i)
    found: dict[int, list[Member]] = {}
    for i, member in enumerate(members):
        found.setdefault(root(i), []).append(member)
    return [g for g in found.values() if len(g) > 1]


def ordered(group: Iterable[Member]) -> list[Member]:
    """The member whose name the merged skill keeps comes first: the most used (the agent
    and its host already call it by that name), then the oldest, then by name."""
    by_age = sorted(group, key=lambda m: (m.created_at, m.name))
    return sorted(by_age, key=lambda m: -m.uses)


def merge_proposal(
    group: Sequence[Member], near: float, max_chars: int, note_name: bool = True
) -> Proposal:
    """The merged skill of one overlap group, under its first member's name."""
    members = ordered(group)
    first = members[0]
    docs = [parse(m.body, m.name) for m in members]
    doc, dropped = merge(docs, [m.name for m in members], first.name, near)
    body = render(doc)
    why = (
        f"{first.name!r} is the most used ({first.uses} uses)"
        if first.uses > members[1].uses
        else f"{first.name!r} is the oldest of equally used skills ({first.created_at})"
    )
    blocked = None
    if len(body) > max_chars:
        blocked = f"the merged skill would be {len(body)} chars; the limit is {max_chars}"
    return Proposal(
        "consolidate",
        tuple(m.name for m in members),
        first.name,
        why,
        body,
        tuple(dropped),
        sum(len(m.body) for m in members),
        len(body),
        blocked,
    )


def merge(
    docs: Sequence[Document], sources: Sequence[str], name: str, near: float
) -> tuple[Document, list[Dropped]]:
    """Documents joined section by section (first appearance sets the order), then cut of
    near-duplicate paragraphs and repeated lines."""
    dropped: list[Dropped] = []
    meta, extra = merge_meta([d.meta for d in docs], sources, name)
    sections: dict[tuple[str, ...], Section] = {}
    for doc in docs:
        for section in doc.sections:
            into = sections.setdefault(section.key, Section(section.key, section.heading))
            into.blocks.extend(section.blocks)
    for section in sections.values():
        section.blocks = _distinct_blocks(section, near, dropped)
        section.blocks = _distinct_lines(section, dropped)
    merged = list(sections.values())
    if extra:
        lines = [f"- {source}: {key}: {value}" for source, key, value in extra]
        note = Section(("front matter kept from the merged skills",), "## Front matter kept")
        note.blocks.append(Block("\n".join(lines), name))
        merged.append(note)
    return Document(meta, merged), dropped


def merge_meta(
    metas: Sequence[dict[str, Any] | None], sources: Sequence[str], name: str
) -> tuple[dict[str, Any] | None, list[tuple[str, str, Any]]]:
    """Front matter merged key by key: ``name`` is the merged name; lists are joined;
    distinct descriptions are joined; any other value that differs from the first one
    seen is returned to be kept in the body (never dropped)."""
    if all(m is None for m in metas):
        return None, []
    merged: dict[str, Any] = {}
    extra: list[tuple[str, str, Any]] = []
    for meta, source in zip(metas, sources, strict=True):
        for key, value in (meta or {}).items():
            if key == "name":
                merged[key] = name
            elif key not in merged or merged[key] == value:
                merged[key] = value
            elif isinstance(merged[key], list) and isinstance(value, list):
                merged[key] = merged[key] + [v for v in value if v not in merged[key]]
            elif key == "description" and isinstance(value, str):
                merged[key] = f"{merged[key]} {value}".strip()
            else:
                extra.append((source, key, value))
    return merged, extra


def _distinct_blocks(section: Section, near: float, dropped: list[Dropped]) -> list[Block]:
    """A block that repeats a kept one goes: a fenced block only when identical, a prose
    block when it is a near-duplicate (the one with more words stays, in the first one's
    place)."""
    kept: list[Block] = []
    for block in section.blocks:
        twin = next((i for i, k in enumerate(kept) if _same(block, k, near)), None)
        if twin is None:
            kept.append(block)
            continue
        other = kept[twin]
        if not block.fenced and len(word_set(block.text)) > len(word_set(other.text)):
            kept[twin], block, other = block, other, block
        reason = "duplicate block" if block.fenced else "near-duplicate paragraph"
        dropped.append(Dropped(block.source, section.title, block.text, reason))
    return kept


def _same(a: Block, b: Block, near: float) -> bool:
    if a.fenced or b.fenced:
        return a.fenced and b.fenced and a.text.strip() == b.text.strip()
    return near_duplicate(a.text, b.text, near) is not None


def line_key(line: str) -> str:
    """A line as compared for repetition: list markers, case, spacing and punctuation
    ignored ("1. Run tests" repeats "- run tests."). Empty for table rows and lines
    without words, which are never dropped as repeats."""
    if line.lstrip().startswith("|"):
        return ""
    return normalise(_LIST_MARK.sub("", line))


def _distinct_lines(section: Section, dropped: list[Dropped]) -> list[Block]:
    """Outside fenced code, a line said before in the same section goes."""
    seen: set[str] = set()
    out: list[Block] = []
    for block in section.blocks:
        if block.fenced:
            out.append(block)
            continue
        lines = []
        for line in block.text.splitlines():
            key = line_key(line)
            if key and key in seen:
                dropped.append(Dropped(block.source, section.title, line, "duplicate line"))
                continue
            seen.add(key)
            lines.append(line)
        if lines:
            out.append(Block("\n".join(lines), block.source))
    return out


def trim_proposal(member: Member, near: float, bloat_chars: int) -> Proposal | None:
    """A skill's body without its repetition and, while still over ``bloat_chars``, with
    its longest sections' prose shortened; None when that changes nothing."""
    original = parse(member.body, member.name)
    doc, dropped = merge([original], [member.name], member.name, near)
    if len(render(doc)) > bloat_chars:
        dropped += summarise(doc, bloat_chars)
    if not dropped:
        return None
    body = render(doc)
    why = (
        "repeated lines or paragraphs"
        if len(member.body) <= bloat_chars
        else (f"{len(member.body)} chars, over the {bloat_chars} threshold")
    )
    return Proposal(
        "patch",
        (member.name,),
        member.name,
        why,
        body,
        tuple(dropped),
        len(member.body),
        len(body),
    )


def summarise(doc: Document, limit: int) -> list[Dropped]:
    """Longest section first, each prose line (a paragraph or a list item) is cut to its
    first sentence until the body is within ``limit``. Code is never shortened."""
    dropped: list[Dropped] = []
    for section in sorted(doc.sections, key=lambda s: -s.chars()):
        if len(render(doc)) <= limit:
            break
        blocks = []
        for block in section.blocks:
            lines = []
            for line in block.text.splitlines():
                first, *rest = [line] if block.fenced else _SENTENCE_END.split(line, 1)
                lines.append(first)
                if rest:
                    dropped.append(Dropped(block.source, section.title, rest[0], "summarised"))
            blocks.append(Block("\n".join(lines), block.source))
        section.blocks = blocks
    return dropped
