"""Natural corrections supersede however the change is phrased; narrative observations and
facts about other things stay ADD; restatements in other words are one fact; the flush
keeps time order (the correction-revert sequence of issue 8, item 1)."""

from __future__ import annotations

import pytest

import reverie
from reverie.rules.similarity import near_duplicate
from reverie.rules.supersede import changes_value, restates_values, supersedes
from tests.conftest import ok

NATURAL = [
    ("dashboard: grafana.internal/d/pay-42", "dashboard moved to grafana.internal/d/pay-57"),
    ("The staging DB is pg-stage-2 on port 5433", "The staging DB port is 5434"),
    ("aiming for 10 books by March 1", "extended my reading challenge goal to 12 books by March 1"),
    ("$5,000 for software licenses", "the budget for software licenses increased to $6,200"),
    ("Achieved 65% test coverage on the API module", "The unit test coverage has increased to 78%"),
    ("The deploy timeout is 30s", "scratch that, the deploy timeout is 45s"),
    ("The owner is Alice", "no wait — the owner is Bob now"),
    ("postgres pool size is 45", "bumped the pool size to 90"),
    ("sso is okta", "sso moved from okta to entra id last week"),
    ("The nightly job runs at 02:30", "the nightly job changed from 02:30 to 03:15"),
    ("Api replica count dropped to 3 replicas", "The api replica count is 6 replicas."),
    ("deploy timeout is 30s", "deploy timeout dropped to 90 sec"),
    (
        "Standup with the team is on March 22 at 3 PM",
        "The standup was moved to March 22 at 4:30 PM",
    ),
    ("pool size is 45 rn", "we bumped default_pool_size to 90 today"),
    ("our budget is 1,200 credits per month", "finance bumped our credit budget to 1500/mo"),
    ("crash-free target is 99.5% btw", "we raised crash-free target to 99.7 since last week"),
    ("global batch 256 on 4 GPUs", "going to batch 512 and lowering lr to 1e-4"),
    ("The payments dashboard is grafana.acme.io/d/pay-42.", "btw we set the dashboard to pay-57"),
    ("The payments dashboard is grafana.acme.io/d/pay-57.", "new payments dashboard: d/pay-42"),
]

UNRELATED = [
    ("Caroline went to 2 concerts in May", "Caroline now has 3 kids"),
    ("Server web-1 listens on port 8001", "Server web-2 now listens on port 8002"),
    ("Server 1 is down", "Server 2 is down"),
    ("Melanie ran 5 miles on Sunday", "Melanie ran 10 miles on Tuesday"),
    ("Joanna is a writer", "Joanna is a painter"),
    ("Caroline is researching adoption agencies", "Caroline is now planning a trip to Spain"),
    ("The office is on floor 3", "The cafeteria is now open until 9pm"),
]


@pytest.mark.parametrize(("old", "new"), NATURAL)
def test_a_natural_correction_supersedes(old: str, new: str) -> None:
    assert supersedes(new, old)


@pytest.mark.parametrize(("old", "new"), UNRELATED)
def test_other_facts_and_narrative_do_not_supersede(old: str, new: str) -> None:
    assert not supersedes(new, old)


def test_a_value_change_needs_a_shared_thing_and_a_matching_unit() -> None:
    """The invariants of the value-slot rule, each checked on its own."""
    assert changes_value("The gallery now includes 10 cards", "Added a gallery with 8 cards")
    assert not changes_value("The gallery now includes 10 photos", "Added a gallery with 8 cards")
    assert not changes_value("The queue now holds 10 cards", "Added a gallery with 8 cards")
    assert not changes_value("The gallery includes 10 cards", "Added a gallery with 8 cards")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("as i said the backup retention = 45d", "improved the backup retention to 45d finally"),
        ("The deploy timeout is 45s", "fyi deploy timeout still 45s"),
        ("we extended the backup retention to 45d", "Backup retention is now 45 days (was 14d)."),
    ],
)
def test_the_same_values_about_the_same_thing_are_one_fact(a: str, b: str) -> None:
    assert restates_values(a, b)


def test_a_paraphrased_preference_is_a_near_duplicate() -> None:
    assert near_duplicate("I like terse answers", "Prefers terse answers", 0.8)
    assert not near_duplicate("I like terse answers", "Prefers long answers", 0.8)


async def test_natural_corrections_through_the_store(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        for old, new in NATURAL[:6]:
            topic = {"action": "save", "topic": "t"}
            ok(await s.call_tool("topic", {**topic, "content": old}), "ADD")
            ok(await s.call_tool("topic", {**topic, "content": new}), "SUPERSEDE")
    assert len(await ns.facts("t")) == 6


async def test_the_flush_never_reverts_a_correction(rv: reverie.Reverie) -> None:
    """Issue 8, item 1: an older turn replayed by the flush never overrides a newer value."""
    ns = rv.namespace("a")
    save = {"action": "save", "topic": "deploy"}
    async with ns.session("s") as s:
        ok(await s.call_tool("topic", {**save, "content": "The deploy timeout is 30s"}), "ADD")
        await s.turn(user="The deploy timeout is 30s.")
        ok(
            await s.call_tool("topic", {**save, "content": "The deploy timeout is 45s"}),
            "SUPERSEDE",
        )
        await s.turn(user="Now it's 45s.")
        await s.idle()
        await rv.wait_idle()
    assert [f.content for f in await ns.facts("deploy")] == ["The deploy timeout is 45s"]
    hits = await ns.search("deploy timeout", k=3)
    assert "45s" in hits[0].text


async def test_a_session_s_corrections_collapse_to_the_latest(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        await s.turn(user="The standup is at 16:00 every day.")
        await s.turn(user="wait no, 16:30. typo")
        await s.idle()
        await rv.wait_idle()
    facts = [h.text for h in await ns.search("standup", k=5) if h.kind == "fact"]
    assert facts == ["The standup is 16:30"]
    flushes = [r.detail for r in await ns.ledger() if r.action == "flush"]
    assert flushes[0]["skipped_because"] == {"restated later in the session": 1}


async def test_the_flush_does_not_bring_back_what_the_agent_replaced(rv: reverie.Reverie) -> None:
    """Issue 8, item 6: the agent's own tool write in a session wins over the flush."""
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        await s.turn(user="I prefer answers in German.")
        ok(
            await s.call_tool(
                "memory",
                {"action": "add", "target": "user", "content": "I prefer answers in German."},
            ),
            "ADD",
        )
        ok(
            await s.call_tool(
                "memory",
                {
                    "action": "replace",
                    "target": "user",
                    "old_text": "German",
                    "content": "I prefer answers in English.",
                },
            ),
            "REPLACED",
        )
        await s.idle()
        await rv.wait_idle()
    assert [e.content for e in await ns.entries("user")] == ["I prefer answers in English."]
    [flush] = [r.detail for r in await ns.ledger() if r.action == "flush"]
    assert flush["skipped_because"] == {"the agent removed or replaced it after this turn": 1}


def test_an_old_value_mentioned_as_former_is_not_restated() -> None:
    """Invariant: only the old text's first values are compared: saying the former value
    again is a change, not a repeat."""
    assert not restates_values("backup retention is 14d", "Backup retention is now 45d (was 14d)")


async def test_a_preference_said_in_another_store_is_not_stored_again(
    rv: reverie.Reverie,
) -> None:
    """One home, once: the flush does not add to USER.md what SOUL.md already says."""
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        await s.turn(user="i like bullet points in answers")
        await rv.wait_idle()  # extracted before the agent's own write below
        add = {"action": "add", "target": "soul", "content": "Reply in short bullet points."}
        ok(await s.call_tool("memory", add), "ADD")
        await s.idle()
        await rv.wait_idle()
    assert await ns.entries("user") == []
    assert len(await ns.entries("soul")) == 1
    [flush] = [r.detail for r in await ns.ledger() if r.action == "flush"]
    assert flush["skipped_because"] == {"another injected store says it already": 1}


def test_a_change_of_one_value_of_many_does_not_hide_the_rest() -> None:
    """Invariant (nothing silently lost): a statement that changes one value of a fact that
    holds several others does not supersede it; search still puts it first."""
    summary = "Hollis bills $450 per hour, 112 exhibits, trial in room 2204, Pike deposed May 21"
    update = "Hollis raised his rate to $525 per hour"
    assert changes_value(update, summary)
    assert not supersedes(update, summary)
    assert supersedes(update, "Hollis bills $450 per hour")


def test_the_value_a_change_comes_from_is_not_a_new_value() -> None:
    """ "moved from May 21 to May 28" does not correct a fact that already says May 28."""
    already = "Pike deposition May 28, 2:00 p.m., at the Feldstein offices"
    assert not supersedes("the Pike deposition was moved from May 21 to May 28", already)
    assert supersedes(
        "the Pike deposition was moved from May 21 to May 28", "Pike deposition May 21"
    )
