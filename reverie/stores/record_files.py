"""Seed 003's files, as projections of the learning records (never read back as truth).

Under ``<home>/<namespace>/``:

- ``memory/index.jsonl``: one line per record (id, kind, tier, priority, status,
  access_count, updated_at);
- ``memory/hot/session-YYYY-MM-DD-HHMMSS.{md,jsonl}``: the HOT records each session made,
  named by the session's first record (``manual.{md,jsonl}`` for those said by hand);
  ``corrections.md``, ``errors.md``, ``patterns.md``: the HOT log records of those kinds
  (patterns: the library's WARM ones, as the seed writes them to HOT and promotes them);
- ``memory/warm/learnings.jsonl``, ``memory/warm/patterns.jsonl``,
  ``memory/cold/archive.jsonl``: the WARM records, the pattern library, the COLD records;
- ``patterns/p-<id>.md``: each pattern with seed 004's front matter.

Every file is rewritten whole and atomically when its text changes; a HOT session log or
pattern file whose records have moved on is removed. The tier stays one database column.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import yaml

from reverie.stores import patterns
from reverie.stores.db import fetchall
from reverie.stores.learning import LearningRecord, records_of
from reverie.stores.patterns import Pattern
from reverie.stores.projection import Projector, atomic_write, json_line

INDEX_FIELDS: Final = ("id", "kind", "tier", "priority", "status", "access_count", "updated_at")
_LOG_FILES: Final = {"correction": "corrections.md", "error": "errors.md"}


def _jsonl(records: Iterable[LearningRecord]) -> str:
    return "".join(json_line(dataclasses.asdict(r)) for r in records)


def _stamp(when: str) -> str:
    """``session-YYYY-MM-DD-HHMMSS`` of an ISO time."""
    day, _, rest = when.partition("T")
    return f"session-{day}-{''.join(c for c in rest[:8] if c.isdigit())}"


def record_markdown(
    namespace: str, r: Mapping[str, Any], accesses: Sequence[Mapping[str, str]]
) -> list[str]:
    """One record in seed 003's Markdown layout (the HOT logs and ``reverie export
    --format markdown`` both): an ``## ID:`` heading, its fields, its access history."""
    content = str(r["content"]).strip().replace("\n", "\n  ")
    lines = [
        f"## ID: {r['id']}",
        "",
        f"- **Priority**: {r['priority']}",
        f"- **Status**: {r['status']}",
        f"- **Namespace**: {namespace}",
        f"- **Tier**: {r['tier']}",
        f"- **Kind**: {r['kind']}",
    ]
    if r.get("place"):
        lines.append(f"- **Place**: {r['place']}")
    chain = r.get("chain") or {}
    if chain.get("superseded_by"):
        lines.append(f"- **Superseded by**: {chain['superseded_by']} at {chain['invalid_at']}")
    lines += [
        f"- **Content**: {content}",
        f"- **Created**: {r['created_at']}",
        f"- **Updated**: {r['updated_at']}",
        f"- **Accesses**: {r['access_count']}",
        "",
        "### Access history",
        "",
        f"- {_when(str(r['created_at']))} - created",
        *(f"- {_when(a['at'])} - {a['how']}" for a in accesses),
    ]
    return lines


def _when(stamp: str) -> str:
    """An ISO time as the seed writes it: ``2026-03-15 04:25:00``."""
    return stamp.replace("T", " ")[:19]


def _markdown(
    title: str, records: list[LearningRecord], seen: Mapping[str, list[dict[str, str]]]
) -> str:
    out = [f"# {title}"]
    for r in records:
        out += ["", *record_markdown(r.namespace, r.to_dict(), seen.get(r.id, []))]
    return "\n".join(out) + "\n"


def _history(
    conn: sqlite3.Connection, namespace: str, ids: set[str]
) -> dict[str, list[dict[str, str]]]:
    if not ids:
        return {}
    found: dict[str, list[dict[str, str]]] = {}
    for rid, ts, how in fetchall(  # the HOT records' own (the index on accesses' ids)
        conn,
        "SELECT a.id, a.ts, a.how FROM learning l JOIN accesses a"
        " ON a.namespace = l.namespace AND a.id = l.id"
        " WHERE l.namespace = ? AND l.tier = 'hot' ORDER BY a.ts, a.rowid",
        (namespace,),
    ):
        if rid in ids:
            found.setdefault(rid, []).append({"at": ts, "how": how})
    return found


def pattern_markdown(pattern: Pattern, texts: dict[str, str]) -> str:
    """``patterns/p-<id>.md``: seed 004's front matter (with its M-FLOW fields), then the
    examples' texts."""
    front = {
        "name": pattern.name,
        "trigger": pattern.trigger,
        "response": pattern.response,
        "examples": list(pattern.examples),
        "created": pattern.created_at[:10],
        "updated": pattern.updated_at[:10],
        "entity": pattern.entity,
        "facets": list(pattern.facets),
        "episode_id": pattern.episode_id,
    }
    body = "\n".join(f"- [{e}] {texts.get(e, '(gone)')}" for e in pattern.examples)
    head = yaml.safe_dump(front, allow_unicode=True, sort_keys=False)
    return f"---\n{head}---\n\n# {pattern.name}\n\n{pattern.response}\n\n## Examples\n\n{body}\n"


def _hot_files(
    conn: sqlite3.Connection, namespace: str, records: list[LearningRecord]
) -> dict[str, str]:
    hot = [r for r in records if r.tier == "hot"]
    seen = _history(conn, namespace, {r.id for r in hot})
    by_session: dict[str, list[LearningRecord]] = {}
    for r in hot:
        by_session.setdefault(r.session_id or "", []).append(r)
    files: dict[str, str] = {}
    for session, made in by_session.items():
        name = _stamp(min(r.created_at for r in made)) if session else "manual"
        title = f"Session {session}" if session else "Learnt by hand"
        files[f"memory/hot/{name}.md"] = _markdown(title, made, seen)
        files[f"memory/hot/{name}.jsonl"] = _jsonl(made)
    for kind, file in _LOG_FILES.items():
        logged = [r for r in hot if r.kind == kind and r.status == "active"]
        files[f"memory/hot/{file}"] = _markdown(file.removesuffix(".md").title(), logged, seen)
    return files


def render(conn: sqlite3.Connection, namespace: str) -> dict[str, str]:
    """Every record file of the namespace, by path under its folder, as the database
    holds it now."""
    records = records_of(conn, namespace)
    library = patterns.library(conn, namespace)
    texts = {r.id: r.content for r in records}
    files = _hot_files(conn, namespace, records)
    by_id = {r.id: r for r in records}
    files["memory/hot/patterns.md"] = _markdown(
        "Patterns", [by_id[p.id] for p in library if p.id in by_id], {}
    )
    files["memory/index.jsonl"] = "".join(
        json_line({k: getattr(r, k) for k in INDEX_FIELDS}) for r in records
    )
    files["memory/warm/learnings.jsonl"] = _jsonl(
        r for r in records if r.tier == "warm" and r.kind != "pattern"
    )
    files["memory/warm/patterns.jsonl"] = "".join(
        json_line({**p.to_dict(), "episode_id": p.episode_id}) for p in library
    )
    files["memory/cold/archive.jsonl"] = _jsonl(r for r in records if r.tier == "cold")
    for p in library:
        files[f"patterns/{p.id}.md"] = pattern_markdown(p, texts)
    return files


def _stale(folder: Path, files: dict[str, str]) -> list[Path]:
    """Files of the projection that no record makes any more."""
    found = [*folder.glob("memory/hot/session-*"), *folder.glob("patterns/p-*.md")]
    found += folder.glob("memory/hot/manual.*")
    return [p for p in found if str(p.relative_to(folder)) not in files]


def write(projector: Projector, conn: sqlite3.Connection, namespace: str) -> list[str]:
    """Bring the namespace's record files in line with the database; the paths written or
    removed. Rendered before the projection lock is taken (a namespace of 10k records takes
    half a second, and every other projection waits on the lock), written under it."""
    folder = projector.namespace_dir(namespace)
    files = render(conn, namespace)

    def run() -> list[str]:
        changed = []
        for relative, text in files.items():
            path = folder / relative
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                atomic_write(path, text)
                changed.append(relative)
        for path in _stale(folder, files):
            path.unlink(missing_ok=True)
            changed.append(str(path.relative_to(folder)))
        return changed

    return projector.locked(run)
