"""The ``reverie`` command. The edge: it reads the environment, configures logging and span
export, then calls the same public API a host does."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import anyio
import typer
from opentelemetry.sdk.trace import TracerProvider
from rich.console import Console
from rich.table import Table

import reverie
from reverie.config import Config
from reverie.errors import ReverieError
from reverie.runtime import Namespace, Reverie
from reverie.stores.rekey import Rekeyed
from reverie.telemetry.setup import configure_logging, otlp_provider

T = TypeVar("T")

app = typer.Typer(
    help="reverie: self-learning memory for AI agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
memory_app = typer.Typer(
    help="Curated memory entries (MEMORY.md, USER.md, SOUL.md, …).", no_args_is_help=True
)
topic_app = typer.Typer(help="Topic facts and their supersede chains.", no_args_is_help=True)
audit_app = typer.Typer(help="The audit trail.", no_args_is_help=True)
app.add_typer(memory_app, name="memory")
app.add_typer(topic_app, name="topic")
app.add_typer(audit_app, name="audit")

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

Home = Annotated[
    Path,
    typer.Option(
        "--home", envvar="REVERIE_HOME", help="The home directory (reverie.db and projections)."
    ),
]
Ns = Annotated[
    str,
    typer.Option(
        "--namespace", "-n", envvar="REVERIE_NAMESPACE", help="The namespace (a user or project)."
    ),
]
Json = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
ConfigFile = Annotated[
    Path | None, typer.Option("--config", envvar="REVERIE_CONFIG", help="A TOML settings file.")
]
Otlp = Annotated[
    str | None,
    typer.Option(
        "--otlp-endpoint",
        envvar="OTEL_EXPORTER_OTLP_ENDPOINT",
        help="Export spans over OTLP/HTTP to this endpoint.",
    ),
]
Target = Annotated[
    str, typer.Option("--target", "-t", help="memory, user, soul, user_settings or agent_profile.")
]
DEFAULT_HOME = Path(".reverie")


class Edge:
    """What every command shares: settings from the file and environment, span export."""

    def __init__(self, home: Path, config_file: Path | None, otlp: str | None) -> None:
        self.home = home
        self.config = Config.load(config_file, os.environ)
        self.provider: TracerProvider | None = otlp_provider(otlp) if otlp else None

    def run(self, body: Callable[[Reverie], Awaitable[T]]) -> T:
        async def main() -> T:
            async with reverie.open(
                self.home, config=self.config, tracer_provider=self.provider
            ) as rv:
                return await body(rv)

        try:
            return anyio.run(main)
        finally:
            if self.provider is not None:
                self.provider.shutdown()


@app.callback()
def main_options(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug logs on stderr.")] = False,
) -> None:
    configure_logging(verbose)


def _edge(home: Path, config_file: Path | None, otlp: str | None) -> Edge:
    try:
        return Edge(home, config_file, otlp)
    except ReverieError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc


def _print(value: Any, as_json: bool, human: Callable[[], None]) -> None:
    if as_json:
        sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n")
    else:
        human()


def _decision(result: dict[str, Any], as_json: bool) -> None:
    def human() -> None:
        if result["decision"] == "ERROR":
            err.print(f"[red]ERROR[/red] {result['error']}")
        else:
            entry = f" {result['entry_id']}" if result.get("entry_id") else ""
            out.print(f"[bold]{result['decision']}[/bold]{entry} — {result.get('message', '')}")

    _print(result, as_json, human)
    if result["decision"] == "ERROR":
        raise typer.Exit(1)


def _tool(edge: Edge, namespace: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    async def body(rv: Reverie) -> dict[str, Any]:
        async with rv.namespace(namespace).session("cli") as session:
            return await session.call_tool(tool, args)

    return edge.run(body)


def _with_ns(edge: Edge, namespace: str, body: Callable[[Namespace], Awaitable[T]]) -> T:
    async def run(rv: Reverie) -> T:
        return await body(rv.namespace(namespace))

    try:
        return edge.run(run)
    except ReverieError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1) from exc


# -- show / search / restore ----------------------------------------------------------------


@app.command()
def show(
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Print the snapshot a new session of this namespace would start from."""
    edge = _edge(home, config_file, otlp)

    async def read(ns: Namespace) -> tuple[reverie.Snapshot, Rekeyed | None]:
        return await ns.snapshot(), await ns.runtime.rekeyed()

    snap, rekeyed = _with_ns(edge, namespace, read)

    def human() -> None:
        out.print(snap.text, markup=False, highlight=False)
        if rekeyed is not None:  # stored keys were brought up to new rules on open
            err.print(rekeyed.describe(), markup=False, highlight=False)

    _print(
        {
            "namespace": snap.namespace,
            "taken_at": snap.taken_at,
            "text": snap.text,
            "blocks": snap.blocks,
            "topics": list(snap.topics),
            "skills": list(snap.skills),
            "rekeyed": rekeyed.to_dict() if rekeyed is not None else None,
        },
        as_json,
        human,
    )


@app.command()
def search(
    query: str,
    k: Annotated[int, typer.Option("-k", min=1, max=1000)] = 10,
    include_superseded: Annotated[bool, typer.Option("--all")] = False,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Ranked search over live facts, entries and episodes."""
    edge = _edge(home, config_file, otlp)
    hits = _with_ns(
        edge, namespace, lambda ns: ns.search(query, k=k, include_superseded=include_superseded)
    )

    def human() -> None:
        table = Table("score", "kind", "id", "text", title=f"{len(hits)} hits")
        for hit in hits:
            table.add_row(f"{hit.score:.3f}", hit.kind, hit.id, hit.text)
        out.print(table)
        if hits.hidden_superseded:
            out.print(f"{hits.hidden_superseded} superseded facts hidden (--all shows them)")

    _print(
        {"hits": [h.to_dict() for h in hits], "hidden_superseded": hits.hidden_superseded},
        as_json,
        human,
    )


@app.command()
def restore(
    entry_id: str,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Bring back a removed or replaced entry, or an earlier value of a fact."""
    edge = _edge(home, config_file, otlp)
    _decision(_with_ns(edge, namespace, lambda ns: ns.restore(entry_id)), as_json)


# -- memory -----------------------------------------------------------------------------------


@memory_app.command("add")
def memory_add(
    content: str,
    target: Target = "memory",
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Add an entry."""
    edge = _edge(home, config_file, otlp)
    _decision(
        _tool(edge, namespace, "memory", {"action": "add", "target": target, "content": content}),
        as_json,
    )


@memory_app.command("replace")
def memory_replace(
    old_text: str,
    content: str,
    target: Target = "memory",
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Replace the entry containing OLD_TEXT with CONTENT."""
    edge = _edge(home, config_file, otlp)
    _decision(
        _tool(
            edge,
            namespace,
            "memory",
            {"action": "replace", "target": target, "old_text": old_text, "content": content},
        ),
        as_json,
    )


@memory_app.command("remove")
def memory_remove(
    old_text: str,
    target: Target = "memory",
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Remove the entry containing OLD_TEXT (it stays in the ledger)."""
    edge = _edge(home, config_file, otlp)
    _decision(
        _tool(
            edge, namespace, "memory", {"action": "remove", "target": target, "old_text": old_text}
        ),
        as_json,
    )


@memory_app.command("reinforce")
def memory_reinforce(
    old_text: str,
    target: Target = "memory",
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Reinforce the entry containing OLD_TEXT (⟦×N⟧)."""
    edge = _edge(home, config_file, otlp)
    _decision(
        _tool(
            edge,
            namespace,
            "memory",
            {"action": "reinforce", "target": target, "old_text": old_text},
        ),
        as_json,
    )


@memory_app.command("list")
def memory_list(
    target: Target = "memory",
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """List the live entries of a target."""
    edge = _edge(home, config_file, otlp)
    rows = _with_ns(edge, namespace, lambda ns: ns.entries(target))

    def human() -> None:
        table = Table("entry_id", "×", "content", title=f"{target}: {len(rows)} entries")
        for entry in rows:
            table.add_row(entry.id, str(entry.reinforce), entry.content)
        out.print(table)

    _print([e.to_dict() for e in rows], as_json, human)


# -- topics -------------------------------------------------------------------------------------


@topic_app.command("save")
def topic_save(
    topic: str,
    content: str,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Save a fact to a topic (ADD / SUPERSEDE / NOOP / ERROR)."""
    edge = _edge(home, config_file, otlp)
    _decision(
        _tool(edge, namespace, "topic", {"action": "save", "topic": topic, "content": content}),
        as_json,
    )


@topic_app.command("read")
def topic_read(
    topic: str,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """The live facts of a topic."""
    edge = _edge(home, config_file, otlp)
    result = _tool(edge, namespace, "topic", {"action": "read", "topic": topic})
    if result["decision"] == "ERROR":
        _decision(result, as_json)

    def human() -> None:
        table = Table("entry_id", "since", "fact", title=f"{topic}: {len(result['facts'])} facts")
        for fact in result["facts"]:
            table.add_row(fact["entry_id"], fact["since"], fact["content"])
        out.print(table)

    _print(result, as_json, human)


@topic_app.command("list")
def topic_list(
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """The topics with their live and superseded fact counts."""
    edge = _edge(home, config_file, otlp)
    result = _tool(edge, namespace, "topic", {"action": "list"})

    def human() -> None:
        table = Table("topic", "live", "superseded")
        for row in result["topics"]:
            table.add_row(row["topic"], str(row["facts"]), str(row["superseded"]))
        out.print(table)

    _print(result["topics"], as_json, human)


# -- audit ----------------------------------------------------------------------------------------


@audit_app.command("ledger")
def audit_ledger(
    entry: Annotated[str | None, typer.Option("--entry")] = None,
    limit: Annotated[int, typer.Option("--limit", min=0)] = 0,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """The audit ledger, oldest first (``--limit N`` keeps the newest N)."""
    edge = _edge(home, config_file, otlp)
    rows = _with_ns(edge, namespace, lambda ns: ns.ledger(entry))
    if limit:
        rows = rows[-limit:]

    def human() -> None:
        table = Table("seq", "ts", "actor", "action", "decision", "entry_id", "target")
        for r in rows:
            table.add_row(
                str(r.seq), r.ts, r.actor, r.action, r.decision, r.entry_id or "", r.target or ""
            )
        out.print(table)

    _print([r.to_dict() for r in rows], as_json, human)


@audit_app.command("chain")
def audit_chain(
    entry_id: str,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Replay the supersede chain of a fact, oldest first."""
    edge = _edge(home, config_file, otlp)
    chain = _with_ns(edge, namespace, lambda ns: ns.chain(entry_id))
    if not chain:
        err.print(f"[red]error:[/red] no fact {entry_id!r} in namespace {namespace!r}")
        raise typer.Exit(1)

    def human() -> None:
        table = Table(
            "depth",
            "entry_id",
            "valid from",
            "invalid at",
            "fact",
            title=f"chain {chain[0].chain_id}",
        )
        for fact in chain:
            table.add_row(
                str(fact.depth), fact.id, fact.created_at, fact.invalid_at or "live", fact.content
            )
        out.print(table)

    _print([f.to_dict() for f in chain], as_json, human)


def main() -> None:
    app()
