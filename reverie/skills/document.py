"""A SKILL.md body read as its parts: front matter, then sections by heading, each a list
of blocks (paragraphs, lists, fenced code). Consolidate and trim work on these parts and
render them back; nothing is interpreted beyond where a block begins and ends."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_FRONT = re.compile(r"\A---[ \t]*\n(.*?\n)?---[ \t]*(?:\n|\Z)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Block:
    """A run of non-blank lines (a fenced code block keeps its blank lines), and the skill
    it came from."""

    text: str
    source: str

    @property
    def fenced(self) -> bool:
        return bool(_FENCE.match(self.text))


@dataclass(slots=True)
class Section:
    """The blocks under one heading; ``key`` is the normalised heading path (``()`` for
    what comes before the first heading), so ``## Steps`` under ``# Deploy`` in one skill
    meets the same in another."""

    key: tuple[str, ...]
    heading: str | None
    blocks: list[Block] = field(default_factory=list)

    @property
    def title(self) -> str:
        return " / ".join(self.key) or "(top)"

    def chars(self) -> int:
        return len(render_section(self))


@dataclass(slots=True)
class Document:
    """One skill's body: its front matter (a mapping, or None) and its sections in order."""

    meta: dict[str, Any] | None
    sections: list[Section]


def heading_key(text: str) -> str:
    return " ".join(text.casefold().split())


def parse(body: str, source: str) -> Document:
    """Split a body into front matter and sections. Front matter that is not a YAML mapping
    stays in the body as text, so nothing is lost to a parse."""
    meta: dict[str, Any] | None = None
    rest = body
    found = _FRONT.match(body)
    if found is not None:
        try:
            loaded = yaml.safe_load(found.group(1) or "")
        except yaml.YAMLError:
            loaded = None
        if isinstance(loaded, dict):
            meta, rest = {str(k): v for k, v in loaded.items()}, body[found.end() :]
    return Document(meta, _sections(rest, source))


def _sections(text: str, source: str) -> list[Section]:
    sections = [Section((), None)]
    path: list[tuple[int, str]] = []
    lines: list[str] = []
    fenced = False

    def close() -> None:
        if any(line.strip() for line in lines):
            sections[-1].blocks.append(Block("\n".join(lines).strip("\n"), source))
        lines.clear()

    for line in text.splitlines():
        heading = None if fenced else _HEADING.match(line)
        if heading is not None:
            close()
            level = len(heading.group(1))
            path = [p for p in path if p[0] < level] + [(level, heading_key(heading.group(2)))]
            sections.append(Section(tuple(k for _, k in path), line.rstrip()))
            continue
        if _FENCE.match(line):
            if not fenced:
                close()
            fenced = not fenced
            lines.append(line)
            if not fenced:
                close()
            continue
        if not fenced and not line.strip():
            close()
            continue
        lines.append(line)
    close()
    return [s for s in sections if s.heading is not None or s.blocks]


def render_section(section: Section) -> str:
    parts = [section.heading] if section.heading else []
    parts += [b.text for b in section.blocks]
    return "\n\n".join(parts)


def render(doc: Document) -> str:
    """The body as text: front matter (when any), then each section, blank-line separated
    (no trailing newline: skill bodies are stored stripped)."""
    parts = []
    if doc.meta is not None:
        dumped = yaml.safe_dump(doc.meta, sort_keys=False, allow_unicode=True, width=100)
        parts.append(f"---\n{dumped}---")
    parts += [render_section(s) for s in doc.sections if s.heading or s.blocks]
    return "\n\n".join(p for p in parts if p)
