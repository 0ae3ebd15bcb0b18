"""Issue 11's import and export of learning records.

``ns.export("jsonl" | "markdown")`` writes a namespace's records; ``ns.import_records(path)``
reads a JSONL export, a Hermes memories folder or an OpenClaw workspace. An export read
back into an empty namespace is restored as it was (:func:`reverie.stores.transfer.restore`);
anything else goes through the writer's rules (:mod:`reverie.transfer.merge`). Either way
the answer is an :class:`ImportReport` with a decision per line.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from reverie.config import WriterConfig
from reverie.errors import InputError, quoted
from reverie.stores import namespaces
from reverie.stores import transfer as rows
from reverie.stores.db import Database
from reverie.transfer import jsonl, markdown, workspaces
from reverie.transfer.merge import Ask, Item, merge
from reverie.transfer.report import ERROR, ImportReport, LineDecision

EXPORT_FORMATS: Final = ("jsonl", "markdown")
IMPORT_FORMATS: Final = ("jsonl", workspaces.HERMES, workspaces.OPENCLAW)
_LIVE: Final = ("active", "resolved")
MAX_PATH_CHARS: Final = 4096
MAX_JSONL_BYTES: Final = 512_000_000
"""An export is read whole: about a million records."""

__all__ = ["EXPORT_FORMATS", "IMPORT_FORMATS", "ImportReport", "LineDecision", "Plan"]


def export(conn: sqlite3.Connection, namespace: str, format: str) -> str:  # noqa: A002
    """The namespace's records as one text in ``format``."""
    head, records = rows.header(conn, namespace), rows.dump(conn, namespace)
    if format == "markdown":
        return markdown.render(head, records)
    return jsonl.render(head, records)


@dataclass(frozen=True, slots=True)
class Plan:
    """An import source read and checked, before anything is written: a JSONL export's
    lines, or a workspace's items."""

    source: str
    format: str
    lines: jsonl.Lines | None = None
    items: tuple[Item, ...] = field(default_factory=tuple)


def plan(source: str | Path | Sequence[str], format: str | None = None) -> Plan:  # noqa: A002
    """Read ``source`` in ``format`` (found from the path when None); a list or tuple of
    strings is the lines of a JSONL export. A source that cannot be read raises
    :class:`InputError`."""
    if isinstance(source, list | tuple):
        return _lines_plan(source, format)
    if not isinstance(source, str | Path) or not str(source).strip():
        raise InputError(f"source must be a path, got {quoted(source, 60)}")
    if len(str(source)) > MAX_PATH_CHARS:
        raise InputError(f"source is a path of at most {MAX_PATH_CHARS} chars")
    try:
        return _plan(Path(source).expanduser(), format)
    except OSError as exc:  # a path the system refuses (too long a name, no permission, …)
        why = exc.strerror or type(exc).__name__
        raise InputError(f"cannot read {quoted(str(source), 200)}: {why}") from exc


def _lines_plan(lines: Sequence[object], format: str | None) -> Plan:  # noqa: A002
    if format not in (None, "jsonl"):
        raise InputError(f"lines are read as JSONL, not {quoted(format)}")
    if not all(isinstance(line, str) for line in lines):
        raise InputError("lines must all be strings (the lines of a JSONL export)")
    text = "\n".join(str(line).rstrip("\n") for line in lines)
    if len(text.encode("utf-8", "surrogatepass")) > MAX_JSONL_BYTES:
        raise InputError(f"an import is at most {MAX_JSONL_BYTES} bytes")
    return Plan("<lines>", "jsonl", lines=jsonl.read(text))


def _plan(path: Path, format: str | None) -> Plan:  # noqa: A002
    if format is not None and format not in IMPORT_FORMATS:
        raise InputError(f"format is one of {', '.join(IMPORT_FORMATS)}, got {quoted(format)}")
    found = format or workspaces.detect(path)
    if found == "jsonl":
        if not path.is_file():
            raise InputError(f"no JSONL file {quoted(str(path))} to import")
        text = workspaces.text_of(path, MAX_JSONL_BYTES)
        return Plan(str(path), found, lines=jsonl.read(text))
    if not path.is_dir():
        raise InputError(f"a {found} import reads a folder; {quoted(str(path))} is not one")
    read = workspaces.read_hermes if found == workspaces.HERMES else workspaces.read_openclaw
    return Plan(str(path), found, items=tuple(read(path)))


async def apply(
    planned: Plan,
    namespace: str,
    db: Database,
    ask: Ask,
    writer: WriterConfig,
    after_restore: Callable[[], Awaitable[Any]],
    now: str,
) -> ImportReport:
    """Write what ``planned`` holds: a restore when it is an export and the namespace is
    empty, else a merge through the writer."""
    report = ImportReport(planned.source, planned.format, "merge")
    if planned.lines is None:
        decisions = await merge(planned.items, namespace, ask, writer)
        return _with(report, decisions, by_line=False)  # in the order the files were read
    lines = planned.lines
    restored, note = await db.write(lambda conn: _restore(conn, namespace, lines, now))
    if restored is not None:
        notes: tuple[str, ...] = ()
        try:  # the records are committed: files that cannot be written now are next open's
            await after_restore()
        except OSError as exc:
            notes = (
                f"MEMORY.md and the other files were not rewritten ({exc}); "
                "they are rebuilt when the home is next opened",
            )
        report = ImportReport(planned.source, planned.format, "restore", notes=notes)
        return _with(report, restored)
    items = [_item(n, r) for n, r in lines.records]
    decisions = [_refused(n, why, rid) for n, why, rid in lines.refused]
    decisions += await merge(items, namespace, ask, writer)
    return _with(ImportReport(planned.source, planned.format, "merge", notes=(note,)), decisions)


def _with(
    report: ImportReport, decisions: list[LineDecision], *, by_line: bool = True
) -> ImportReport:
    ordered = tuple(sorted(decisions, key=lambda d: d.line) if by_line else decisions)
    return ImportReport(report.source, report.format, report.mode, ordered, report.notes)


def _refused(line: int, why: str, rid: str | None) -> LineDecision:
    return LineDecision(line, ERROR, rid, f"line {line}: {why}; skipped")


def _restore(
    conn: sqlite3.Connection, namespace: str, lines: jsonl.Lines, now: str
) -> tuple[list[LineDecision] | None, str]:
    """The restore's decisions, in its one transaction; None (and why) when the namespace
    cannot take the export as it was, so it is merged instead. An archived namespace
    takes nothing (:class:`NamespaceArchived`)."""
    namespaces.check_open(conn, namespace)
    if not rows.is_empty(conn, namespace):
        return None, f"namespace {namespace!r} is not empty: records went through the writer"
    taken = rows.taken(conn, [r["id"] for _, r in lines.records])
    if taken:
        return None, (
            f"{len(taken)} ids are already used in this home (e.g. {taken[0]}): "
            "records went through the writer"
        )
    kept, unlinked = jsonl.linked(list(lines.records))
    decisions = [_refused(n, why, rid) for n, why, rid in [*lines.refused, *unlinked]]
    if kept or lines.head:
        rows.restore(conn, namespace, lines.head, [r for _, r in kept], now)
    decisions += [LineDecision(n, "ADD", r["id"], "restored as exported") for n, r in kept]
    return decisions, ""


def _item(line: int, record: dict[str, Any]) -> Item:
    """An export's record as a write: only a live one is written into a namespace that
    already holds records (a superseded or archived one has no place among them)."""
    kind = record["kind"]
    skip = None
    if record["status"] not in _LIVE:
        skip = f"{record['status']} in the export: a merge brings only live records"
    return Item(
        line,
        kind,
        record.get("place") if kind in jsonl.STORED_KINDS else None,
        record["content"],
        priority=record["priority"],
        was=record["id"],
        skip=skip,
    )
