"""Property tests of the supersede chains: whatever sequence of saves and restores arrives,
every chain has exactly one live fact, chains are acyclic, and nothing is ever deleted."""

from __future__ import annotations

import tempfile
from pathlib import Path

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reverie
from tests.conftest import read_db

SUBJECTS = ["The deploy timeout", "The api host", "Max upload size", "The team lead"]
VALUES = ["30s", "45s", "api1.internal", "api2.internal", "25 MB", "100 MB", "Maria", "Jonas"]
TOPICS = ["ops", "people"]

saves = st.tuples(st.sampled_from(TOPICS), st.sampled_from(SUBJECTS), st.sampled_from(VALUES))
steps = st.lists(st.one_of(saves, st.integers(min_value=0, max_value=50)), min_size=1, max_size=25)


async def run(home: Path, plan: list[tuple[str, str, str] | int]) -> list[dict[str, object]]:
    results: list[dict[str, object]] = []
    async with reverie.open(home) as rv:
        ns = rv.namespace()
        async with ns.session("p") as s:
            for step in plan:
                if isinstance(step, int):  # restore some earlier fact, if there is one
                    facts = [r for r in results if str(r.get("entry_id", "")).startswith("fct-")]
                    if facts:
                        results.append(await ns.restore(str(facts[step % len(facts)]["entry_id"])))
                    continue
                topic, subject, value = step
                results.append(
                    await s.call_tool(
                        "topic",
                        {"action": "save", "topic": topic, "content": f"{subject} is {value}"},
                    )
                )
    return results


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=steps)
def test_chain_invariants(plan: list[tuple[str, str, str] | int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        results = anyio.run(run, home, plan)
        with read_db(home) as conn:
            rows = conn.execute(
                "SELECT id, chain_id, depth, supersedes, superseded_by, invalid_at, topic"
                " FROM facts"
            ).fetchall()
            ledger_writes = conn.execute(
                "SELECT count(*) FROM ledger WHERE decision IN ('ADD', 'SUPERSEDE')"
                " AND target != 'episode'"
            ).fetchone()[0]
    facts = {r[0]: r for r in rows}
    written = [r for r in results if r["decision"] in ("ADD", "SUPERSEDE")]
    # nothing deleted: every acknowledged fact is still there, and each has its ledger row
    assert {str(r["entry_id"]) for r in written} <= set(facts)
    assert len(facts) == len(written) == ledger_writes
    chains: dict[str, list[tuple[object, ...]]] = {}
    for row in rows:
        chains.setdefault(row[1], []).append(row)
    for chain_id, members in chains.items():
        assert sum(1 for m in members if m[5] is None) == 1, "exactly one live fact per chain"
        assert len({m[6] for m in members}) == 1, "a chain never crosses topics"
        assert sorted(m[2] for m in members) == list(range(1, len(members) + 1))
        root = [m for m in members if m[3] is None]
        assert len(root) == 1 and root[0][0] == chain_id
        # acyclic: following superseded_by from the root visits every member once
        seen, node = [], root[0]
        while node is not None:
            assert node[0] not in seen
            seen.append(node[0])
            node = facts[node[4]] if node[4] else None
        assert len(seen) == len(members)
        for member in members:
            if member[4] is not None:
                successor = facts[member[4]]
                assert successor[3] == member[0] and successor[2] == member[2] + 1
                assert member[5] is not None
