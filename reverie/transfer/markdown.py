"""The Markdown export, in seed 003's layout: a heading per record naming its id, its
fields as a bullet list, then its access history (made, then each access)."""

from __future__ import annotations

from typing import Any


def render(head: dict[str, Any], records: list[dict[str, Any]]) -> str:
    namespace = head.get("namespace", "")
    lines = [f"# Learning records — {namespace}", ""]
    lines.append(f"{len(records)} records; {head.get('sessions', 0)} sessions ended.")
    for record in records:
        lines += ["", *_record(namespace, record)]
    return "\n".join(lines) + "\n"


def _record(namespace: str, r: dict[str, Any]) -> list[str]:
    content = r["content"].strip().replace("\n", "\n  ")
    lines = [
        f"## [{r['id']}]",
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
        f"- {_when(r['created_at'])} - created",
    ]
    lines += [f"- {_when(a['at'])} - {a['how']}" for a in r.get("accesses", [])]
    return lines


def _when(stamp: str) -> str:
    """An ISO time as the seed writes it: ``2026-03-15 04:25:00``."""
    return stamp.replace("T", " ")[:19]
