"""``reverie profile``: the current profile (USER.md) and self-model (SOUL.md) syntheses,
each clause with the ids of its sources and whether it is still grounded."""

from __future__ import annotations

from typing import Any

from reverie.cli.app import (
    DEFAULT_HOME,
    ConfigFile,
    Home,
    Json,
    Ns,
    Otlp,
    _edge,
    _print,
    _with_ns,
    app,
    out,
)
from reverie.runtime import Namespace


@app.command()
def profile(
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """The weekly profile and self-model syntheses, with the sources of every value."""
    edge = _edge(home, config_file, otlp, as_json=as_json)

    async def read(ns: Namespace) -> tuple[dict[str, Any], bool]:
        return await ns.profile(), ns.runtime.config.profiler.enabled

    found, enabled = _with_ns(edge, namespace, read)
    why = "it is written by the weekly review" if enabled else "the profiler is off: [profiler]"
    why += "" if enabled else " enabled = true, or REVERIE_PROFILER_ENABLED=true, turns it on"

    def human() -> None:
        for target, label in (("user", "USER.md"), ("soul", "SOUL.md")):
            one = found[target]
            if one is None:
                out.print(f"{label}: no synthesis yet ({why})", markup=False, highlight=False)
                continue
            state = "grounded" if one["grounded"] else "not grounded"
            out.print(f"[bold]{label}[/bold] {one['entry_id']} ({one['author']}, {state})")
            out.print(f"  {one['content']}", markup=False, highlight=False)
            for clause in one["clauses"]:
                mark = "ok" if clause["grounded"] else f"STALE: {clause['problem']}"
                line = f"  - {clause['section']}: {clause['text']} <- {' '.join(clause['sources'])}"
                out.print(f"{line} [{mark}]", markup=False, highlight=False)

    _print(found, as_json, human)
