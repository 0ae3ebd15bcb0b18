"""The learning-record commands (seed 003): ``query``, ``learn``, ``recall``, ``tier``,
``promote``, ``status``, ``patterns`` and ``reindex``."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from reverie.cli.app import (
    DEFAULT_HOME,
    ConfigFile,
    Home,
    Json,
    Ns,
    Otlp,
    _decision,
    _edge,
    _print,
    _with_ns,
    app,
    out,
)
from reverie.stores.learning import LearningRecord
from reverie.stores.patterns import Pattern


def _records(records: list[LearningRecord], as_json: bool) -> None:
    def human() -> None:
        table = Table(
            "id",
            "kind",
            "tier",
            "priority",
            "status",
            "access",
            "updated",
            "content",
            title=f"{len(records)} records",
        )
        for r in records:
            table.add_row(
                r.id,
                r.kind,
                r.tier,
                r.priority,
                r.status,
                str(r.access_count),
                r.updated_at[:19],
                r.content,
            )
        out.print(table)

    _print([r.to_dict() for r in records], as_json, human)


def _one(record: LearningRecord, as_json: bool) -> None:
    def human() -> None:
        out.print(
            f"[bold]{record.id}[/bold] {record.kind}: tier {record.tier}, priority "
            f"{record.priority}, {record.status}, {record.access_count} accesses"
        )

    _print(record.to_dict(), as_json, human)


@app.command()
def query(
    q: Annotated[str, typer.Argument(help="e.g. 'priority:high tier:warm \"free text\"'")] = "",
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Learning records by field filters (priority, tier, status, kind, id, place, since,
    until), free text, sort: and limit:."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    _records(_with_ns(edge, namespace, lambda ns: ns.query(q)), as_json)


@app.command()
def learn(
    content: str,
    kind: Annotated[str, typer.Option("--kind", help="insight, lesson, correction, …")] = "insight",
    priority: Annotated[str, typer.Option("--priority", help="low … critical")] = "medium",
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Record a learning by hand (seed 003's manual trigger); it starts HOT."""
    edge = _edge(home, config_file, otlp, as_json=as_json, existing=False)
    _decision(_with_ns(edge, namespace, lambda ns: ns.learn(content, kind, priority)), as_json)


@app.command()
def recall(
    record_id: str,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Bring a record back to HOT (from COLD or WARM), counted as a reference."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    _one(_with_ns(edge, namespace, lambda ns: ns.recall(record_id)), as_json)


@app.command()
def tier(
    record_id: str,
    to: Annotated[str, typer.Option("--to", help="hot, warm or cold")],
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Move a record to a tier by hand (audited; move it back to undo)."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    _one(_with_ns(edge, namespace, lambda ns: ns.set_tier(record_id, to)), as_json)


@app.command()
def promote(
    record_id: str,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Raise a record's priority one level (low → medium → high → critical)."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    _one(_with_ns(edge, namespace, lambda ns: ns.promote(record_id)), as_json)


@app.command()
def status(
    all_namespaces: Annotated[bool, typer.Option("--all", help="Every namespace.")] = False,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Records per tier, kind, status and priority; patterns; sessions; last heartbeat."""
    edge = _edge(home, config_file, otlp, as_json=as_json)

    async def every(rv: Any) -> list[dict[str, Any]]:
        return [await rv.namespace(name).status() for name in await rv.namespaces()]

    if all_namespaces:
        found = edge.run(every)
    else:
        found = [_with_ns(edge, namespace, lambda ns: ns.status())]

    def human() -> None:
        for one in found:
            out.print(
                f"[bold]{one['namespace']}[/bold]: {one['sessions']} sessions ended, "
                f"last heartbeat {one['last_heartbeat'] or 'never'}, "
                f"{one['patterns']} patterns"
            )
            for column in ("tier", "kind", "status", "priority"):
                shown = ", ".join(f"{k} {v}" for k, v in one[column].items()) or "none"
                out.print(f"  {column}: {shown}", markup=False, highlight=False)

    _print(found if all_namespaces else found[0], as_json, human)


@app.command()
def patterns(
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """The pattern library: lessons, errors and corrections seen in several sessions."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    found: list[Pattern] = _with_ns(edge, namespace, lambda ns: ns.patterns())

    def human() -> None:
        out.print(f"{len(found)} patterns")
        for p in found:
            out.print(f"[bold]{p.id}[/bold] {p.name} ({p.tier}, {p.sessions} sessions)")
            out.print(f"  when: {p.trigger}", markup=False, highlight=False)
            out.print(f"  then: {p.response}", markup=False, highlight=False)
            out.print(f"  examples: {', '.join(p.examples)}", markup=False, highlight=False)

    _print([{**p.to_dict(), "episode_id": p.episode_id} for p in found], as_json, human)


@app.command()
def reindex(
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Seed 003's prime: the search index and the record files (index.jsonl, HOT logs,
    patterns) made again from the database."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    done: dict[str, Any] = _with_ns(edge, namespace, lambda ns: ns.reindex())

    def human() -> None:
        out.print(
            f"{done['namespace']}: {done['search_rows']} search rows, "
            f"{len(done['files'])} files rewritten"
        )

    _print(done, as_json, human)
