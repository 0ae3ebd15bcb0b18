"""A dream's files, written from its record after the commit that keeps it (a file lost
is written again from the ledger: ``reverie report dream --date D``):

- ``dreams/YYYY-MM-DD.md`` (the report; a second dream of the day replaces it) and a
  line appended to ``dream-log.md``;
- ``reports/daily-YYYY-MM-DD.md``, with the first dream after an evening slot (its date
  is that evening's);
- ``truth/user_state.md`` (who the user is, as USER.md and user_settings hold it now) and
  ``truth/pending.md`` (the next actions and the errors still open);
- ``archive.md``: each record that went COLD since the last dream, appended once
  (compressed to one line; the record itself stays in the store, recallable)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from reverie.dream import report
from reverie.stores.projection import Projector, atomic_write


def dream_file(projector: Projector, namespace: str, date: str) -> Path:
    return projector.namespace_dir(namespace) / "dreams" / f"{date}.md"


def daily_file(projector: Projector, namespace: str, date: str) -> Path:
    return projector.namespace_dir(namespace) / "reports" / f"daily-{date}.md"


def _truth(run: Mapping[str, Any]) -> dict[str, str]:
    state = ["# User state", "", *(f"- {line}" for line in run.get("user_state", []))]
    pending = ["# Pending", ""]
    pending += [f"- [ ] {a}" for a in run["learnt"]["actions"]]
    pending += [f"- [ ] open error: {e['text']}" for e in run["day"]["open_errors"]]
    return {"user_state.md": "\n".join(state) + "\n", "pending.md": "\n".join(pending) + "\n"}


def _archived(run: Mapping[str, Any]) -> str:
    lines = []
    for c in run["day"]["cooled"]:
        text = " ".join(str(c["text"] or "").split())[:200]
        lines.append(f"- {run['date']} {c['id']} ({c['kind']}, {c['why']}): {text}\n")
    return "".join(lines)


def _append(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def write(
    projector: Projector,
    namespace: str,
    run: Mapping[str, Any],
    project: Callable[[Callable[[], None]], None],
) -> list[str]:
    """Every file of the dream, each under the home's projection lock; a failure is
    logged by ``project`` and never un-records the dream. Returns the paths written."""
    root = projector.namespace_dir(namespace)
    written: list[str] = []

    def put(path: Path, text: str, *, append: bool = False) -> None:
        def one() -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            _append(path, text) if append else atomic_write(path, text)
            written.append(str(path.relative_to(root)))

        project(lambda: projector.locked(one))

    put(dream_file(projector, namespace, run["date"]), report.dream(run))
    put(root / "dream-log.md", report.log_line(run), append=True)
    if run["evening"]:
        put(daily_file(projector, namespace, run["daily_date"]), report.daily(run))
    for name, text in _truth(run).items():
        put(root / "truth" / name, text)
    archived = _archived(run)
    if archived:
        put(root / "archive.md", archived, append=True)
    return written
