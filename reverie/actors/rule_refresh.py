"""The promoter's refresh of a promoted rule (part of L6): a correction of a fact that was
promoted into MEMORY.md rewrites that rule too, by the promotion rules (no model call), so
the memory injected every turn never keeps citing the old value.

The writer asks for it in the transaction of the correction — a row of the outbox
(``review_state.REFRESH``) — and wakes the promoter once that committed; the promoter runs
every pending ask in one transaction of its own, on that message and at each of its turns
in a review pass, so a crash between the commit and the message loses nothing.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from reverie.actors.context import new_id
from reverie.config import Config
from reverie.rules.consolidation import rewrite, rewrite_problem
from reverie.rules.similarity import near_duplicate
from reverie.stores import entries, generated, ledger, review_state, topics
from reverie.stores.records import Entry, Fact, LedgerRecord
from reverie.stores.review_state import promoted_key
from reverie.telemetry.tracing import trace_id_hex


def refresh_all(conn: sqlite3.Connection, config: Config, namespace: str, now: str) -> bool:
    """Handle every pending ask of the namespace (inside the caller's transaction, stamped
    ``now``); True when MEMORY.md changed."""
    changed = False
    for chain_id, ask in review_state.refreshes(conn, namespace).items():
        review_state.drop(conn, namespace, review_state.REFRESH + chain_id)
        new = topics.get(conn, namespace, ask["fact_id"])
        rule = _rule(conn, namespace, chain_id)
        if new is None or new.invalid_at is not None or rule is None:
            continue  # corrected again since (a newer ask replaced this one), or no rule
        if _refresh(conn, config, now, rule, new, ask):
            changed = True
        elif ask.get("restored"):
            _retire(conn, now, rule, new, ask)
            changed = True
    return changed


def _rule(conn: sqlite3.Connection, namespace: str, chain_id: str) -> Entry | None:
    entry_id = review_state.get(conn, namespace, promoted_key(chain_id))
    entry = entries.get(conn, namespace, entry_id) if entry_id else None
    return entry if entry is not None and entry.status == "live" else None


def _refresh(
    conn: sqlite3.Connection,
    cfg: Config,
    now: str,
    rule: Entry,
    new: Fact,
    ask: dict[str, Any],
) -> bool:
    """Rewrite ``rule`` from the chain's new value; False (nothing written) when the
    rewrite fails its checks, would duplicate another entry or would overflow the cap."""
    limit = cfg.promoter.rewrite_chars
    text = rewrite(new.content, new.topic, limit)
    if rewrite_problem(text, new.content, new.topic, limit) is not None:
        return False
    live = entries.live(conn, rule.namespace, "memory")
    threshold = cfg.writer.jaccard_threshold
    if any(near_duplicate(text, e.content, threshold) for e in live if e.id != rule.id):
        return False
    fresh = _entry(rule.namespace, text, new.session_id, now)
    if entries.usage_after(live, {rule.id: fresh.rendered}) > cfg.caps.memory:
        return False
    entries.end(conn, rule.id, "replaced", now, replaced_by=fresh.id)
    entries.insert(conn, fresh)
    review_state.put(conn, rule.namespace, promoted_key(new.chain_id), fresh.id, now)
    generated.remember(conn, rule.namespace, text, f"promoter:{new.chain_id}", now)
    _audit(
        conn,
        now,
        rule,
        "refresh",
        "REPLACED",
        fresh.id,
        before={"entry_id": rule.id, "content": rule.content},
        after={"entry_id": fresh.id, "content": fresh.content},
        session_id=new.session_id,
        detail={"chain_id": new.chain_id, "fact_id": new.id, "superseded": ask["old_id"]},
    )
    return True


def _retire(
    conn: sqlite3.Connection, now: str, rule: Entry, back: Fact, ask: dict[str, Any]
) -> None:
    """A restored value that cannot be written as a rule retires the rule stating the value
    just undone (the ledger keeps it; ``restore`` brings it back)."""
    entries.end(conn, rule.id, "removed", now)
    _audit(
        conn,
        now,
        rule,
        "retire",
        "REMOVED",
        rule.id,
        before={"content": rule.content},
        detail={"chain_id": back.chain_id, "undone": ask["old_id"], "restored": back.id},
    )


def _entry(namespace: str, text: str, session_id: str | None, now: str) -> Entry:
    return Entry(
        id=new_id("ent"),
        namespace=namespace,
        target="memory",
        content=text,
        key=None,
        reinforce=1,
        status="live",
        replaced_by=None,
        created_by="promoter",
        session_id=session_id,
        created_at=now,
        updated_at=now,
        ended_at=None,
    )


def _audit(
    conn: sqlite3.Connection,
    now: str,
    rule: Entry,
    action: str,
    decision: str,
    entry_id: str,
    **record: Any,
) -> None:
    ledger.append(
        conn,
        LedgerRecord(
            ts=now,
            namespace=rule.namespace,
            actor="promoter",
            action=action,
            decision=decision,
            entry_id=entry_id,
            target="memory",
            trace_id=trace_id_hex(),
            **record,
        ),
    )
