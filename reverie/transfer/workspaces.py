"""Other agents' memory folders, read as items for the writer.

- Hermes (``~/.hermes/memories/``): ``MEMORY.md`` and ``USER.md``, entries separated by a
  line holding ``§``; they become entries of the targets ``memory`` and ``user`` (and a
  ``SOUL.md`` beside ``memories/``, of ``soul``).
- OpenClaw (``~/.openclaw/workspace``): ``MEMORY.md`` (curated notes → ``memory``
  entries), ``USER.md`` (→ ``user``), daily notes ``memory/YYYY-MM-DD.md`` or
  ``memory/YYYY-MM-DD-<slug>.md`` (each bullet or paragraph → a ``note`` log record, its
  day kept in the report) and any other Markdown file under ``memory/`` (a topic file:
  each bullet or paragraph → a fact of the topic named by its path).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from reverie.errors import InputError, quoted
from reverie.transfer.merge import Item

HERMES: Final = "hermes"
OPENCLAW: Final = "openclaw"
SEPARATOR: Final = "§"
_DAILY: Final = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:-[\w.-]+)?$")
_BULLET: Final = re.compile(r"^\s{0,3}(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(?P<text>.*)$")
_RULE: Final = re.compile(r"^\s*(?:[═=─-]{3,}|\*{3,})\s*$")
MAX_NOTES_BYTES: Final = 8_000_000
"""A Markdown file of notes larger than this is refused (a memory file is a few KB)."""


def text_of(path: Path, limit: int = MAX_NOTES_BYTES) -> str:
    """A file's text, or :class:`InputError` naming it (nothing is written then)."""
    try:
        if path.stat().st_size > limit:
            raise InputError(f"{path} is over {limit} bytes; split it first")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text: {exc.reason} at byte {exc.start}") from exc
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def hermes_dir(root: Path) -> Path:
    """Where a Hermes home keeps MEMORY.md and USER.md: ``memories/`` or the folder itself."""
    inner = root / "memories"
    return inner if inner.is_dir() else root


def is_hermes(root: Path) -> bool:
    folder = hermes_dir(root)
    for name in ("MEMORY.md", "USER.md"):
        path = folder / name
        if path.is_file() and any(line.strip() == SEPARATOR for line in text_of(path).splitlines()):
            return True
    return folder != root and any((folder / n).is_file() for n in ("MEMORY.md", "USER.md"))


def is_openclaw(root: Path) -> bool:
    return (root / "memory").is_dir() or (root / "MEMORY.md").is_file()


def read_hermes(root: Path) -> list[Item]:
    """Each §-separated entry of a Hermes home's files, in file order."""
    folder = hermes_dir(root)
    files = [(folder / "MEMORY.md", "memory"), (folder / "USER.md", "user")]
    if folder != root:
        files.append((root / "SOUL.md", "soul"))
    found = [(path, target) for path, target in files if path.is_file()]
    if not found:
        raise InputError(f"{root} holds no Hermes MEMORY.md or USER.md")
    items: list[Item] = []
    for path, target in found:
        source = str(path.relative_to(root))
        for line, text in _entries(text_of(path)):
            items.append(Item(line, "entry", target, text, source=source))
    return items


def _entries(text: str) -> list[tuple[int, str]]:
    """The §-separated entries of a file: (first line, text); a multi-line entry stays one."""
    found: list[tuple[int, str]] = []
    start, lines = 1, list[str]()
    for number, line in enumerate([*text.splitlines(), SEPARATOR], 1):
        if line.strip() != SEPARATOR:
            if not lines and not line.strip():
                start = number + 1
                continue
            lines.append(line)
            continue
        body = "\n".join(x for x in lines if not _RULE.match(x)).strip()
        if body:
            found.append((start, body))
        start, lines = number + 1, []
    return found


def read_openclaw(root: Path) -> list[Item]:
    """The notes of an OpenClaw workspace: MEMORY.md and USER.md, the topic files, then
    the daily notes, oldest day first."""
    items: list[Item] = []
    for name, target in (("MEMORY.md", "memory"), ("USER.md", "user")):
        path = root / name
        if path.is_file():
            items += [Item(n, "entry", target, t, source=name) for n, t in notes(text_of(path))]
    folder = root / "memory"
    files = sorted(folder.rglob("*.md")) if folder.is_dir() else []
    daily = [p for p in files if p.parent == folder and _DAILY.match(p.stem)]
    for path in files:
        if path not in daily:
            topic = topic_name(path.relative_to(folder))
            source = str(path.relative_to(root))
            items += [Item(n, "fact", topic, t, source=source) for n, t in notes(text_of(path))]
    for path in sorted(daily, key=lambda p: p.stem):
        day = _DAILY.match(path.stem)
        assert day is not None
        source = str(path.relative_to(root))
        items += [
            Item(n, "note", None, t, source=source, dated=day.group(1))
            for n, t in notes(text_of(path))
        ]
    if not items and not (root / "MEMORY.md").is_file() and not folder.is_dir():
        raise InputError(f"{root} holds no OpenClaw MEMORY.md or memory/ folder")
    return items


def topic_name(relative: Path) -> str:
    """A topic file's topic: its path under ``memory/`` as a lower-case slug."""
    slug = re.sub(r"[^a-z0-9]+", "-", str(relative.with_suffix("")).lower()).strip("-")
    return slug[:40].strip("-") or "notes"


def notes(text: str) -> list[tuple[int, str]]:
    """The notes of a Markdown file: each bullet (with its indented continuation lines)
    or paragraph, with its first line; headings, rules and front matter are not notes."""
    found: list[tuple[int, list[str]]] = []
    current: list[str] | None = None
    lines = text.splitlines()
    skip_to = _front_matter_end(lines)
    for number, line in enumerate(lines, 1):
        if number <= skip_to:
            continue
        bullet = _BULLET.match(line)
        if not line.strip() or line.lstrip().startswith("#") or _RULE.match(line):
            current = None
        elif bullet:
            current = [bullet.group("text")]
            found.append((number, current))
        elif current is not None:
            current.append(line.strip())
        else:
            current = [line.strip()]
            found.append((number, current))
    return [(n, " ".join(parts).strip()) for n, parts in found if " ".join(parts).strip()]


def _front_matter_end(lines: list[str]) -> int:
    if lines and lines[0].strip() == "---":
        for number, line in enumerate(lines[1:], 2):
            if line.strip() == "---":
                return number
    return 0


def detect(path: Path) -> str:
    """The format of an import source: ``jsonl`` for a file, ``hermes`` for a folder whose
    MEMORY.md or USER.md holds ``§`` lines, ``openclaw`` for a workspace with ``memory/``."""
    if path.is_file():
        if path.suffix.lower() not in (".jsonl", ".json", ".ndjson"):
            raise InputError(
                f"{quoted(str(path))} is not a .jsonl file; name its format with --format "
                "(a Hermes or OpenClaw import reads a folder)"
            )
        return "jsonl"
    if not path.is_dir():
        raise InputError(f"no file or folder {quoted(str(path))} to import")
    if is_hermes(path):
        return HERMES
    if is_openclaw(path):
        return OPENCLAW
    raise InputError(
        f"{path} is neither a Hermes memories folder (MEMORY.md / USER.md with § lines) nor an "
        "OpenClaw workspace (MEMORY.md, memory/YYYY-MM-DD.md); name one with --format"
    )
