"""``reverie skill scores``: every skill's activity score and tier (seed 004), as of now."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

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
    out,
)
from reverie.cli.loop import skill_app


def _change(row: dict[str, Any]) -> str:
    """The tier at the curator's last scoring, when it differs from now."""
    before = row["previous_tier"]
    return "" if before is None or before == row["tier"] else f"{before} → {row['tier']}"


@skill_app.command("scores")
def skill_scores(
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Every registered skill's activity (calls × quality × decay, 0–100) and tier."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    rows = _with_ns(edge, namespace, lambda ns: ns.skill_scores())

    def human() -> None:
        if not rows:
            out.print("no registered skills")
            return
        table = Table(
            "",
            "skill",
            "score",
            "tier",
            "calls",
            "ok",
            "failed",
            "quality",
            "decay",
            "last used",
            "change",
            title=f"skill activity in {namespace}",
        )
        for row in rows:
            table.add_row(
                row["mark"],
                escape(row["name"]) + (" (pinned)" if row["pinned"] else ""),
                f"{row['score']:.1f}",
                row["tier"],
                str(row["calls"]),
                str(row["successes"]),
                str(row["failures"]),
                f"{row['quality']:.2f}",
                f"×{row['decay']:g}",
                (row["last_used_at"] or "")[:10],
                _change(row),
            )
        out.print(table)

    _print(rows, as_json, human)
