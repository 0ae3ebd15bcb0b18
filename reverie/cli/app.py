"""The ``reverie`` command. The edge: it reads the environment, configures logging and span
export, then calls the same public API a host does."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import anyio
import typer
from opentelemetry.sdk.trace import TracerProvider
from rich.console import Console
from rich.markup import escape
from rich.table import Table

import reverie
from reverie.cli.telemetry import configure_logging, otlp_provider
from reverie.clock import SystemClock, iso
from reverie.config import Config
from reverie.doctor import diagnose
from reverie.doctor import repair as recover
from reverie.errors import ConfigError, HomeError, InputError, ReverieError, quoted
from reverie.names import DATABASE_FILE
from reverie.runtime import DEFAULT_NAMESPACE, Namespace, Reverie
from reverie.stores.rekey import Rekeyed

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


class CommandError(Exception):
    """A user error found by the CLI itself (an unknown namespace): one line, ``code``."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


class Edge:
    """What every command shares: settings from the file and environment, span export, and
    how it fails (one line on stderr, or ``{"error": …}`` on stdout with ``--json``).
    ``existing`` commands read or act on what is stored: they never create a home."""

    def __init__(
        self,
        home: Path,
        config_file: Path | None,
        otlp: str | None,
        *,
        as_json: bool = False,
        existing: bool = False,
    ) -> None:
        self.home = home
        self.as_json = as_json
        self.existing = existing
        self.config = Config.load(config_file, os.environ)
        service = os.environ.get("OTEL_SERVICE_NAME") or "reverie"
        self.provider: TracerProvider | None = otlp_provider(otlp, service) if otlp else None

    def fail(self, message: str, code: int = 1) -> NoReturn:
        """Stop the command with one line, never a traceback."""
        fail(message, code, self.as_json)

    def run(self, body: Callable[[Reverie], Awaitable[T]]) -> T:
        if self.existing and not (self.home / DATABASE_FILE).is_file():
            what = "does not exist" if not self.home.exists() else "holds no reverie.db"
            self.fail(f"no reverie home at {self.home} ({what}); nothing was created", 2)

        async def main() -> T:
            async with reverie.open(
                self.home,
                config=self.config,
                tracer_provider=self.provider,
                create=not self.existing,
            ) as rv:
                return await body(rv)

        try:
            return anyio.run(main)
        except CommandError as exc:
            self.fail(str(exc), exc.code)
        except (ConfigError, HomeError, InputError) as exc:  # the user's to fix
            self.fail(str(exc), 2)
        except ReverieError as exc:
            self.fail(str(exc), 1)
        finally:
            if self.provider is not None:
                self.provider.shutdown()


def fail(message: str, code: int, as_json: bool) -> NoReturn:
    """One line on stderr, or ``{"error": message}`` on stdout for ``--json``; exit ``code``."""
    line = " ".join(message.split())
    if as_json:
        sys.stdout.write(json.dumps({"error": line}, ensure_ascii=False) + "\n")
    else:
        err.print(f"[red]error:[/red] {escape(line)}", highlight=False)
    raise typer.Exit(code)


@app.callback()
def main_options(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug logs on stderr.")] = False,
) -> None:
    configure_logging(verbose)


def _edge(
    home: Path,
    config_file: Path | None,
    otlp: str | None,
    *,
    as_json: bool = False,
    existing: bool = True,
) -> Edge:
    """The edge of one command; ``existing=False`` only for commands that may make a home."""
    try:
        return Edge(home, config_file, otlp, as_json=as_json, existing=existing)
    except ReverieError as exc:
        fail(str(exc), 2, as_json)


def _print(value: Any, as_json: bool, human: Callable[[], None]) -> None:
    if as_json:
        sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n")
    else:
        human()


def _decision(result: dict[str, Any], as_json: bool) -> None:
    def human() -> None:
        if result["decision"] == "ERROR":
            err.print(f"[red]ERROR[/red] {escape(str(result['error']))}")
        else:
            entry = f" {result['entry_id']}" if result.get("entry_id") else ""
            out.print(f"[bold]{result['decision']}[/bold]{entry} — {result.get('message', '')}")

    _print(result, as_json, human)
    if result["decision"] == "ERROR":
        raise typer.Exit(1)


async def _namespace(rv: Reverie, name: str, existing: bool) -> Namespace:
    """The namespace a command acts on; for a command on what is stored, one the home
    knows (the default one always is), else a one-line error listing the known ones."""
    namespace = rv.namespace(name)
    if existing and name != DEFAULT_NAMESPACE:
        known = await rv.namespaces(include_archived=True)  # an archived one is read
        if name not in known:
            shown = ", ".join(known[:20]) + (f" and {len(known) - 20} more" if known[20:] else "")
            raise CommandError(
                f"no namespace {name!r} in {rv.home}; known: {shown or 'none yet'} "
                "(`reverie namespaces` lists them)"
            )
    return namespace


def _tool(edge: Edge, namespace: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    async def body(rv: Reverie) -> dict[str, Any]:
        ns = await _namespace(rv, namespace, edge.existing)
        async with ns.session("cli") as session:
            return await session.call_tool(tool, args)

    return edge.run(body)


def _with_ns(edge: Edge, namespace: str, body: Callable[[Namespace], Awaitable[T]]) -> T:
    async def run(rv: Reverie) -> T:
        return await body(await _namespace(rv, namespace, edge.existing))

    return edge.run(run)


# -- namespaces / doctor --------------------------------------------------------------------


@app.command()
def namespaces(
    home: Home = DEFAULT_HOME,
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """The namespaces this home holds."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    names = edge.run(lambda rv: rv.namespaces())
    _print(names, as_json, lambda: out.print("\n".join(names), markup=False, highlight=False))


@app.command()
def doctor(
    repair: Annotated[
        bool, typer.Option("--repair", help="Rebuild the database from the home's files.")
    ] = False,
    home: Home = DEFAULT_HOME,
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Say what is wrong with a home (a missing, empty or reduced database; files that
    could not be rebuilt); with --repair, rebuild the database from the files."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    found = diagnose(home)
    if found.database == "no home":
        edge.fail(f"no reverie home at {home} ({found.detail})", 2)
    report: dict[str, Any] = {"diagnosis": found.to_dict()}
    if repair and not found.healthy:
        try:
            report["repaired"] = recover(home, edge.config, iso(SystemClock().now())).to_dict()
        except (ReverieError, OSError, sqlite3.Error) as exc:
            edge.fail(f"the repair failed: {exc}; nothing was deleted", 1)
        found = diagnose(home)
        report["after"] = found.to_dict()
    if found.healthy:
        report["projection_failures"] = edge.run(_rebuilt)
    healthy = found.healthy and not report.get("projection_failures")
    report["healthy"] = healthy
    _print(report, as_json, lambda: _doctor_human(report))
    if not healthy:
        raise typer.Exit(1)


async def _rebuilt(rv: Reverie) -> dict[str, str]:
    return dict(rv.projection_failures)


def _doctor_human(report: dict[str, Any]) -> None:
    """What was found, then what a repair did and what it refused, then the state after it:
    a repair's result is never preceded by the healthy verdict it produced."""
    _database_lines("database", report["diagnosis"])
    repaired = report.get("repaired")
    if repaired:
        _repaired_lines(repaired)
        _database_lines("after the repair, database", report["after"])
    found = report.get("after") or report["diagnosis"]
    for namespace, error in (report.get("projection_failures") or {}).items():
        out.print(f"files of {namespace or 'the home'} could not be rebuilt: {escape(error)}")
    if not found["healthy"] and not repaired:
        out.print(f"run `reverie doctor --repair --home {found['home']}` to rebuild it")
    elif report["healthy"]:
        out.print("[green]healthy[/green]")


def _database_lines(label: str, found: dict[str, Any]) -> None:
    out.print(f"{label}: [bold]{found['database']}[/bold] — {escape(found['detail'])}")
    for line in found["lost"]:
        out.print(f"  lacks: {escape(line)}")


def _repaired_lines(repaired: dict[str, Any]) -> None:
    out.print(
        f"repaired: {repaired['entries']} entries, {repaired['facts']} facts, "
        f"{repaired['skills']} skills, {repaired['decisions']} promotion decisions "
        f"recovered; kept aside: {', '.join(repaired['kept']) or 'nothing'}"
    )
    for line in repaired["skipped"]:
        out.print(f"  skipped: {escape(line)}")
    for line in repaired["not_recovered"]:
        out.print(f"  not recoverable: {escape(line)}")
    for refused in repaired["refused"]:
        out.print(
            f"  refused {escape(refused['what'])} of {escape(refused['source'])} "
            f"{escape(quoted(refused['content'], 80))}: {escape(refused['reason'])}"
        )
    if repaired["refused_report"]:
        out.print(
            f"  {len(repaired['refused'])} refused texts (secrets redacted) are listed in "
            f"{escape(repaired['refused_report'])}; nothing of them was imported"
        )


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
    edge = _edge(home, config_file, otlp, as_json=as_json)

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
    mode: Annotated[
        str, typer.Option("--mode", help="default, or bundle (seed 004's Bundle Search)")
    ] = "default",
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Ranked search over live facts, entries and episodes."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    hits = _with_ns(
        edge,
        namespace,
        lambda ns: ns.search(
            query,
            k=k,
            include_superseded=include_superseded,
            mode=mode,  # type: ignore[arg-type]  # checked there: a bad one is an InputError
        ),
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
    edge = _edge(home, config_file, otlp, as_json=as_json)
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
    edge = _edge(home, config_file, otlp, as_json=as_json, existing=False)
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
    edge = _edge(home, config_file, otlp, as_json=as_json)
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
    edge = _edge(home, config_file, otlp, as_json=as_json)
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
    edge = _edge(home, config_file, otlp, as_json=as_json)
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
    edge = _edge(home, config_file, otlp, as_json=as_json)
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
    edge = _edge(home, config_file, otlp, as_json=as_json, existing=False)
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
    edge = _edge(home, config_file, otlp, as_json=as_json)
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
    edge = _edge(home, config_file, otlp, as_json=as_json)
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
    edge = _edge(home, config_file, otlp, as_json=as_json)
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
    edge = _edge(home, config_file, otlp, as_json=as_json)
    chain = _with_ns(edge, namespace, lambda ns: ns.chain(entry_id))
    if not chain:
        edge.fail(f"no fact {entry_id!r} in namespace {namespace!r}")

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
    """Run the command; a usage error (a bad option value, an unknown option, a missing
    argument) is one line too, and ``{"error": …}`` on stdout under ``--json``, exit 2."""
    try:
        code = app(standalone_mode=False)
    except _CLICK_ERROR as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # a bare group: its help, as click does
            sys.stdout.write(exc.format_message() + "\n")  # type: ignore[attr-defined]
            sys.exit(2)
        try:
            fail(_usage_message(exc), getattr(exc, "exit_code", 2), "--json" in sys.argv[1:])
        except typer.Exit as stop:
            sys.exit(stop.exit_code)
    except typer.Abort:  # Ctrl-C at a prompt
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


def _click_error() -> type[Exception]:
    """The error class typer raises for a usage error: the click package's in older typer
    versions, typer's own vendored copy in newer ones; found from a class typer exports."""
    for cls in typer.BadParameter.__mro__:
        if cls.__name__ == "ClickException":
            return cls
    raise ImportError("typer.BadParameter no longer derives from a ClickException")


_CLICK_ERROR = _click_error()


def _usage_message(exc: Exception) -> str:
    """Click's message, with where to read more for a usage error."""
    format_message = getattr(exc, "format_message", None)
    message = format_message() if callable(format_message) else str(exc)
    ctx = getattr(exc, "ctx", None)
    path = getattr(ctx, "command_path", None)
    if path:
        message += f" (see `{path} --help`)"
    return str(message)
