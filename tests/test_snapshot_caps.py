"""The snapshot's skills index is capped like the other blocks (D14: 300 skills made a
48,474-char snapshot): pinned skills, then the most recently used or changed, within
``caps.skills`` chars, and a count of the rest."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import reverie
from reverie import Config, ManualClock
from reverie.config import DEFAULT_SKILLS_CAP
from reverie.snapshot import skills_index
from reverie.stores.records import Skill
from tests.conftest import ok

SKILLS = 300


def section(text: str, title: str) -> str:
    """One section of a snapshot, without its header line."""
    start = text.index(f"## {title}")
    body = text[start:].split("\n", 1)[1]
    return body.split("\n\n", 1)[0]


async def test_d14_three_hundred_skills_fit_the_skills_cap(
    tmp_path: Path, clock: ManualClock
) -> None:
    async with reverie.open(tmp_path / "h", clock=clock) as rv:
        ns = rv.namespace("a")
        async with ns.session("s") as s:
            for i in range(SKILLS):
                body = (
                    f"Workflow number {i}: check the runbook, then page the owner of service {i}."
                )
                args = {"action": "create", "name": f"skill-{i:03}", "content": body}
                ok(await s.call_tool("skill_manage", args), "CREATED")
                clock.advance(timedelta(seconds=1))
        snapshot = await ns.snapshot()
    index = section(snapshot.text, "SKILLS")
    lines = index.split("\n")
    assert DEFAULT_SKILLS_CAP == 2000  # the documented default
    assert DEFAULT_SKILLS_CAP - 160 < len(index) <= DEFAULT_SKILLS_CAP  # full, never over
    shown = [line for line in lines if line.startswith("- skill-")]
    assert lines[-1] == f"… and {SKILLS - len(shown)} more skills not shown"
    assert shown[0].startswith("- skill-299:")  # the newest first
    assert len(snapshot.text) < 3000 and len(snapshot.skills) == SKILLS


def skill(name: str, *, used: str | None = None, pinned: bool = False) -> Skill:
    return Skill("a", name, f"what {name} does", "skill_manage", pinned, "t0", "t1", used, None)


def test_the_skills_index_fits_its_cap_exactly() -> None:
    registered = [skill(f"s{i}") for i in range(5)]
    full, left = skills_index(registered, 10_000)
    assert left == 0 and "more" not in full
    exact, left = skills_index(registered, len(full))  # exactly the size of all five
    assert (exact, left) == (full, 0)
    cut, left = skills_index(registered, len(full) - 1)
    assert left >= 1 and len(cut) <= len(full) - 1
    assert cut.endswith(f"… and {left} more skills not shown")
    first, second = full.split("\n")[:2]
    note = "… and 3 more skills not shown"
    two = len(first) + 1 + len(second) + 1 + len(note)  # two lines and the count, exactly
    assert skills_index(registered, two) == (f"{first}\n{second}\n{note}", 3)
    assert skills_index(registered, two - 1)[1] == 4
    nothing, left = skills_index(registered, 10)
    assert (nothing, left) == ("", 5)  # not even the count fits: nothing, never over


def test_pinned_then_most_recently_used_first() -> None:
    registered = [
        skill("alpha"),
        skill("bravo", used="t5"),
        skill("charlie", pinned=True),
        skill("delta", used="t9"),
    ]
    index, _ = skills_index(registered, 10_000)
    names = [line.split(":")[0].removeprefix("- ") for line in index.split("\n")]
    assert names == ["charlie", "delta", "bravo", "alpha"]


async def test_a_lower_skills_cap_from_config_is_honoured(tmp_path: Path) -> None:
    config = Config().with_section("caps", skills=300)
    async with reverie.open(tmp_path / "h", config=config) as rv:
        ns = rv.namespace("a")
        async with ns.session("s") as s:
            for i in range(20):
                args = {"action": "create", "name": f"k{i}", "content": f"Step {i} of the runbook"}
                ok(await s.call_tool("skill_manage", args), "CREATED")
        index = section((await ns.snapshot()).text, "SKILLS")
    assert 0 < len(index) <= 300 and index.endswith("more skills not shown")
