"""Property test of the tool surface: whatever arguments arrive, call_tool answers with a
JSON-able result and a known decision, never raises, and an ERROR writes nothing."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reverie
from tests.conftest import read_db

DECISIONS = {
    "ADD",
    "SUPERSEDE",
    "NOOP",
    "REPLACED",
    "REMOVED",
    "REINFORCED",
    "CREATED",
    "PATCHED",
    "ERROR",
}
TABLES = ("entries", "topics", "facts", "skills", "ledger")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
texts = st.one_of(
    st.text(max_size=60),
    st.sampled_from(["deploy", "../x", "The timeout is 30s", "shared", "a\x00b", "⟦×2⟧", ""]),
)
arguments = st.fixed_dictionaries(
    {},
    optional={
        "action": st.sampled_from(
            [
                "add",
                "replace",
                "remove",
                "reinforce",
                "save",
                "read",
                "list",
                "create",
                "patch",
                "drop",
            ]
        )
        | json_values,
        "target": st.sampled_from(["memory", "user", "soul", "user_settings", "nope"])
        | json_values,
        "topic": texts | json_values,
        "name": texts,
        "content": texts | json_values,
        "old_text": texts,
        "extra": json_values,
    },
)
calls = st.lists(
    st.tuples(st.sampled_from(["memory", "topic", "skill_manage", "other"]), arguments),
    min_size=1,
    max_size=12,
)


def counts(home: Path) -> dict[str, int]:
    with read_db(home) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


async def run(home: Path, plan: list[tuple[str, dict[str, Any]]]) -> None:
    async with reverie.open(home) as rv:
        async with rv.namespace().session("fuzz") as s:
            await s.call_tool(
                "memory", {"action": "add", "target": "memory", "content": "shared entry one"}
            )
            for tool, args in plan:
                before = counts(home)
                result = await s.call_tool(tool, args)
                json.dumps(result)  # JSON-able
                assert result["decision"] in DECISIONS, result
                if result["decision"] == "ERROR":
                    assert isinstance(result["error"], str) and result["error"]
                    assert counts(home) == before, (tool, args, result)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=calls)
def test_any_call_is_answered_and_errors_write_nothing(
    plan: list[tuple[str, dict[str, Any]]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        anyio.run(run, Path(tmp), plan)
