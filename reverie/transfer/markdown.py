"""The Markdown export, in seed 003's layout: a heading per record naming its id, its
fields as a bullet list, then its access history (made, then each access) — the layout
the HOT session logs use too (:func:`reverie.stores.record_files.record_markdown`)."""

from __future__ import annotations

from typing import Any

from reverie.stores.record_files import record_markdown


def render(head: dict[str, Any], records: list[dict[str, Any]]) -> str:
    namespace = head.get("namespace", "")
    lines = [f"# Learning records — {namespace}", ""]
    lines.append(f"{len(records)} records; {head.get('sessions', 0)} sessions ended.")
    for record in records:
        lines += ["", *record_markdown(namespace, record, record.get("accesses", []))]
    return "\n".join(lines) + "\n"
