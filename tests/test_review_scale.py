"""D15, the cost of a review pass: how many reads and writes a pass of one namespace makes,
counted on the real database (speed itself is measured in ``bench/review_scale.py``)."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

import reverie
from reverie import ManualClock
from reverie.actors.curator import Curator
from reverie.actors.linter import RELATED, Linter
from reverie.actors.promoter import Promoter
from reverie.bus.messages import PromoteDue, ToolCall
from reverie.reports import CuratorDetails
from reverie.stores import topics
from tests.conftest import review_stage

CURATOR_FAILED = {
    "linter": "ran",
    "distiller": "ran",
    "promoter": "ran",
    "curator": "failed",
    "profiler": "disabled",
    "dreamer": "disabled",
}


@pytest.fixture
def config() -> reverie.Config:
    """The pass's four seed-000 stages, counted here; the dream (twice a day, its own
    reads and writes) is measured in tests/test_dream.py, the weekly profile synthesis in
    tests/test_profile.py."""
    return (
        reverie.Config()
        .with_section("dream", enabled=False)
        .with_section("profiler", enabled=False)
    )


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {s["stage"]: s["status"] for s in report["namespaces"][0]["stages"]}


def count_calls(monkeypatch: pytest.MonkeyPatch, rv: reverie.Reverie) -> Counter[str]:
    """Counts the database's write transactions and read snapshots from now on."""
    db, seen = rv.services.db, Counter[str]()
    read, write = db.read, db.write

    async def counted_read(body: Callable[[sqlite3.Connection], Any]) -> Any:
        seen["read"] += 1
        return await read(body)

    async def counted_write(body: Callable[[sqlite3.Connection], Any], then: Any = None) -> Any:
        seen["write"] += 1
        return await write(body, then=then)

    monkeypatch.setattr(db, "read", counted_read)
    monkeypatch.setattr(db, "write", counted_write)
    return seen


async def remember(rv: reverie.Reverie, *topic_facts: tuple[str, str]) -> None:
    async with rv.namespace("a").session("s") as s:
        await s.call_tool(
            "memory", {"action": "add", "target": "memory", "content": "Run make check first"}
        )
        for topic, content in topic_facts:
            await s.call_tool("topic", {"action": "save", "topic": topic, "content": content})
    await rv.wait_idle()  # the session's end is the extractor's, not the pass's


async def test_a_pass_that_changes_nothing_but_stamps_commits_twice(
    rv: reverie.Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Invariant: the stages' bookkeeping (stamps, ledger rows) joins the pass's closing
    transaction — two writes a pass (begin, end), not one per stage — and still lands;
    what the due stages look at is read once for all of them (one snapshot, one hop)."""
    await remember(rv)
    seen = count_calls(monkeypatch, rv)
    report = await rv.namespace("a").review(force=True)
    assert [s["status"] for s in report["stages"]] == ["ran"] * 4 + ["disabled"] * 2
    assert seen == Counter(write=2, read=1)
    rounds = [r.actor for r in await rv.namespace("a").ledger() if r.action == "round"]
    assert rounds == ["linter", "distiller", "promoter", "curator"]
    await remember(rv, ("deploy", "The deploy port is 8080"))  # something new: not quiet
    again = await rv.namespace("a").review(force=True)
    landed = ["not_due"] * 4 + ["disabled"] * 2  # the stamps landed
    assert [s["status"] for s in again["stages"]] == landed


async def test_a_pass_that_distils_still_commits_twice(
    rv: reverie.Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every summary of a round joins the pass's closing write (not one write per topic,
    nor one for the distiller), and its file is written once that committed."""
    await remember(rv, ("deploy", "The deploy port is 8080"), ("oncall", "The pager is #ops"))
    seen = count_calls(monkeypatch, rv)
    report = await rv.review(force=True)
    assert review_stage(report, "distiller")["distilled"] == 2
    assert seen["write"] == 2 and seen["read"] == 3  # the names with the quiet marks, the
    # four stages' looks (one snapshot each), and the summaries' files once the write landed
    home = rv.home / "a" / "topics"
    assert (home / "deploy" / "summary.md").read_text() == "The deploy port is 8080\n"
    assert (home / "oncall" / "summary.md").read_text() == "The pager is #ops\n"


async def test_due_checks_read_nothing_of_their_own(
    rv: reverie.Reverie, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The transaction that begins a pass reads every stage's last run: a pass in which no
    stage is due makes no read at all."""
    await remember(rv, ("deploy", "The deploy port is 8080"))
    await rv.review(force=True)
    clock.advance(timedelta(hours=7))
    await remember(rv, ("deploy", "The deploy region is eu-west-1"))
    seen = count_calls(monkeypatch, rv)
    report = await rv.namespace("a").review()
    assert [s["status"] for s in report["stages"]] == ["not_due"] * 4 + ["disabled"] * 2
    assert all(s["next_due"] for s in report["stages"][:4])
    assert seen == Counter(write=2)


async def test_a_quiet_round_costs_the_same_for_any_number_of_namespaces(
    rv: reverie.Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A round in which nothing is new writes nothing and reads once (the names and the
    quiet marks, in one snapshot), however many namespaces there are."""
    for name in ("a", "b", "c", "d", "e"):
        async with rv.namespace(name).session("s") as s:
            await s.call_tool("topic", {"action": "save", "topic": "t", "content": f"{name} is 1"})
    assert all(r["ran"] for r in (await rv.review(force=True))["namespaces"])
    seen = count_calls(monkeypatch, rv)
    quiet = await rv.review(force=True)
    assert not any(r["ran"] for r in quiet["namespaces"]) and len(quiet["namespaces"]) == 5
    assert seen == Counter(read=1)


async def test_a_deferred_write_that_fails_fails_its_stage_alone(
    rv: reverie.Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fail-silent holds in the closing transaction: a stage's deferred write that raises is
    rolled back alone, its stage is reported failed (due again), the others land."""

    async def broken(self: Curator) -> CuratorDetails:
        def finish(conn: sqlite3.Connection) -> None:
            self.done(conn, {})
            raise RuntimeError("curator bookkeeping broke")

        await self.commit(finish, "curator", [{"ts": "x"}], defer=True)
        return CuratorDetails(candidates=(), issues=(), dry_run=True)

    monkeypatch.setattr(Curator, "run", broken)
    await remember(rv)
    report = await rv.review(force=True)
    assert statuses(report) == CURATOR_FAILED
    assert "curator bookkeeping broke" in review_stage(report, "curator")["error"]
    rounds = [r.actor for r in await rv.namespace("a").ledger() if r.action == "round"]
    assert rounds == ["linter", "distiller", "promoter"]  # the curator's row rolled back
    assert not (rv.home / "a" / "logs" / "wiki" / "curator.jsonl").exists()
    monkeypatch.undo()
    again = statuses(await rv.review(force=True))  # not quiet: the curator is due
    assert again == {
        "linter": "not_due",
        "distiller": "not_due",
        "promoter": "not_due",
        "curator": "ran",
        "profiler": "disabled",
        "dreamer": "disabled",
    }


def _conflicts(rv: reverie.Reverie) -> Any:
    scan = rv.factories[Linter]("a")._scan

    async def run() -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str]]]:
        found = await rv.services.db.read(lambda conn: scan(conn, float("inf")))
        return (
            {(c.kind, c.a.id, c.b.id) for c in found.conflicts},
            {(kind, a.id, b.id) for kind, a, b in found.unclear},
        )

    return run()


async def test_a_small_namespace_is_linted_whole_as_the_search_would(
    rv: reverie.Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A namespace with few facts is compared whole instead of searched (a search costs the
    matches of every namespace in the home): the same conflicts and unclear pairs."""
    async with rv.namespace("a").session("s") as s:
        for content in (
            "Remember the deploy timeout is 30s",
            "Staging uses feature flags for billing",
            "Backups go to bucket acme-bk-1 nightly",
        ):
            await s.call_tool("memory", {"action": "add", "target": "memory", "content": content})
        for topic, content in (
            ("deploy", "The deploy timeout is 30s"),
            ("deploy", "Actually, the deploy timeout is 45s"),
            ("staging", "Staging does not use feature flags for billing"),
            ("backup", "Backups bucket is acme-bk-1"),
            ("backup", "Backups bucket is acme-bk-2"),
            ("misc", "The office plant is watered on Fridays"),
        ):
            await s.call_tool("topic", {"action": "save", "topic": topic, "content": content})
    whole = await _conflicts(rv)
    assert {kind for kind, _, _ in whole[0]} == {"memory_vs_topic", "stale_citation"}
    assert whole[1]  # the feature-flag pair is for the model
    monkeypatch.setattr(topics, "every_live", lambda conn, ns, limit: None)
    monkeypatch.setattr(topics, "every_superseded", lambda conn, ns, limit: None)
    assert await _conflicts(rv) == whole  # through the search: the same findings


async def test_a_namespace_over_the_bound_is_searched(rv: reverie.Reverie) -> None:
    """Past ``RELATED`` facts the lint reads through the search again, and still finds an
    entry citing a superseded value."""
    async with rv.namespace("a").session("s") as s:
        await s.call_tool(
            "memory",
            {"action": "add", "target": "memory", "content": "Backups go to bucket acme-bk-1"},
        )
        for i in range(RELATED + 1):
            await s.call_tool(
                "topic",
                {"action": "save", "topic": "hosts", "content": f"Host h{i} serves shard {i}"},
            )
        for bucket in ("acme-bk-1", "acme-bk-2"):
            await s.call_tool(
                "topic",
                {"action": "save", "topic": "backup", "content": f"Backups bucket is {bucket}"},
            )
    found = await rv.services.db.read(lambda conn: topics.every_live(conn, "a", RELATED))
    assert found is None
    conflicts, _ = await _conflicts(rv)
    assert {kind for kind, _, _ in conflicts} == {"stale_citation"}


async def test_a_broken_look_fails_its_stage_alone(
    rv: reverie.Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stages' looks share one read; one that raises fails only its own stage (the
    others read, ran and stamped), and that stage is due again next pass."""

    def broken(self: Curator, conn: sqlite3.Connection) -> None:
        raise RuntimeError("curator look broke")

    monkeypatch.setattr(Curator, "look", broken)
    await remember(rv, ("deploy", "The deploy port is 8080"))
    report = await rv.review(force=True)
    assert statuses(report) == CURATOR_FAILED
    assert "curator look broke" in review_stage(report, "curator")["error"]
    monkeypatch.undo()
    await remember(rv, ("deploy", "The deploy region is eu-west-1"))
    again = await rv.review(force=True)
    assert statuses(again)["curator"] == "ran"
    assert statuses(again)["promoter"] == "not_due"


async def test_a_stage_uses_the_look_the_pass_read_unless_it_wrote_since(
    rv: reverie.Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The look the pass read for a stage is the stage's (no read of its own), except the
    promoter's after a refresh of a promoted rule changed MEMORY.md in its turn."""
    await remember(rv, ("deploy", "The deploy port is 8080"))
    own_reads: list[str] = []
    looked = Promoter.look

    def counted(self: Promoter, conn: sqlite3.Connection) -> Any:
        own_reads.append(self.name)
        return looked(self, conn)

    async def refreshed(self: Promoter) -> bool:
        return True

    monkeypatch.setattr(Promoter, "look", counted)
    given = ([], [])
    ask = PromoteDue("a", None, known=True, in_pass=False, look=given, looked=True)
    outcome = await rv.services.bus.ask(ask)
    assert outcome.report.status == "ran" and own_reads == []  # the given look was used
    monkeypatch.setattr(Promoter, "refresh", refreshed)
    again = PromoteDue("a", None, known=True, in_pass=False, refresh=True, look=given, looked=True)
    await rv.services.bus.ask(again)
    assert own_reads == ["promoter"]  # MEMORY.md changed: the stale look is not used


async def test_a_stage_with_nothing_to_do_is_not_asked(
    rv: reverie.Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stage that is not due (or switched off) answers from its own check in the pass's
    preview: no ask, no actor started, the same report; a due one is asked in its turn."""
    await remember(rv)
    asked: list[str] = []
    ask = rv.services.bus.ask

    async def counted(message: Any, **kwargs: Any) -> Any:
        if not isinstance(message, ToolCall):
            asked.append(type(message).__name__)
        return await ask(message, **kwargs)

    monkeypatch.setattr(rv.services.bus, "ask", counted)
    first = await rv.namespace("a").review(force=True)
    assert [s["status"] for s in first["stages"]] == ["ran"] * 4 + ["disabled"] * 2
    assert asked == ["ReviewDue", "LintDue", "DistillDue", "PromoteDue", "CurateDue"]
    asked.clear()
    await remember(rv, ("deploy", "The deploy port is 8080"))  # something new: not quiet
    second = await rv.namespace("a").review(force=True)
    assert [s["status"] for s in second["stages"]] == ["not_due"] * 4 + ["disabled"] * 2
    assert all(s["next_due"] for s in second["stages"][:4])
    assert asked == ["ReviewDue"]
