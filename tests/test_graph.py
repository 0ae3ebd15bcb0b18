"""Seed 004's M-FLOW graph built from what the loop stores (issue 12): entities, facets,
facet points and described edges from a scripted week written through the public API;
incremental and idempotent builds; superseded values marked not current; the projection
files; health; a rebuild by ``reindex``; an old home gaining the graph."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from datetime import timedelta
from pathlib import Path
from typing import Any

import reverie
from reverie.bus.messages import GraphDue
from reverie.clock import ManualClock
from reverie.rules.cone import BROAD_CHARS, KEYWORDS, Scope, Unit, keywords, names
from reverie.stores import graph
from tests.conftest import database, ok, rows, write_db

NS = "a"


def topic(name: str, content: str) -> dict[str, str]:
    return {"action": "save", "topic": name, "content": content}


async def week(rv: reverie.Reverie, clock: ManualClock) -> dict[str, str]:
    """Seven days of one user's work, one session a day; the ids of what was written."""
    ns, ids = rv.namespace(NS), {}
    days: list[list[tuple[str, dict[str, str]]]] = [
        [("topic", topic("deploy", "The billing deploy timeout is 30s"))],
        [("memory", {"action": "add", "target": "user", "content": "Prefers terse answers"})],
        [("memory", {"action": "add", "target": "soul", "content": "Reply in plain English"})],
        [("skill_manage", {"action": "create", "name": "triage", "content": "Read the log."})],
        [("topic", topic("ledger", "The ledger service runs on Postgres 16"))],
        [],
        [("topic", topic("deploy", "The billing deploy timeout is 60s now"))],
    ]
    turns = {
        2: "Actually no, the deploy timeout must be 45s; Priya from the platform team said so.",
        5: "We decided to move the ledger backups to the cold bucket, Priya agreed.",
    }
    for day, calls in enumerate(days):
        async with ns.session(f"day-{day}") as s:
            for tool, args in calls:
                result = await s.call_tool(tool, args)
                assert result["decision"] in ("ADD", "SUPERSEDE", "CREATED"), result
                ids[f"{tool}-{day}"] = str(result.get("entry_id"))
            if day in turns:
                await s.turn(user=turns[day], assistant="Noted.")
            await s.idle()
        await rv.wait_idle()
        clock.advance(timedelta(days=1))
    await ns.learn("Always check the deploy timeout before a release", kind="lesson")
    await rv.services.bus.ask(GraphDue(NS))  # as the dream cycle asks before it reads
    return ids


def labels(home: Path, layer: int) -> set[str]:
    return {r[0] for r in rows(home, "SELECT label FROM graph_nodes WHERE layer = ?", layer)}


def keys(home: Path, layer: int) -> set[str]:
    return {r[0] for r in rows(home, "SELECT key FROM graph_nodes WHERE layer = ?", layer)}


def described(home: Path) -> set[str]:
    return {r[0] for r in rows(home, "SELECT description FROM graph_edges")}


def read(home: Path, body: Any) -> Any:
    with closing(sqlite3.connect(database(home))) as conn:
        conn.row_factory = sqlite3.Row
        return body(conn)


async def test_a_scripted_week_builds_the_cone(
    rv: reverie.Reverie, clock: ManualClock, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    ids = await week(rv, clock)
    entities = keys(home, 4)
    assert {"user", "project.deploy", "project.ledger", "skill.triage", "feedback"} <= entities
    assert {"system.agent", "name.priya"} <= entities  # SOUL.md; a name inside a sentence
    points = labels(home, 3)  # type + word (keyed by the word's stem)
    assert {"correction timeout", "pref terse", "fact postgres", "lesson release"} <= points
    assert "correction.timeout" in keys(home, 3)
    facets = labels(home, 2)
    assert {"corrections in deploy", "facts in ledger", "prefs in user", "skills in triage"} <= (
        facets
    )
    assert "decisions in user" in facets  # the extractor's tag of the second turn
    edges = described(home)
    assert "timeout corrections in deploy" in edges  # facet point → facet
    assert "correction about timeout in deploy" in edges  # facet point → episode
    assert "project deploy has corrections" in edges  # entity → facet
    assert any(d.startswith("a correction in deploy about") for d in edges)  # facet → episode
    refs = {r[0] for r in rows(home, "SELECT ref FROM graph_nodes WHERE layer = 1")}
    assert {ids["topic-0"], ids["memory-1"], ids["topic-4"], "skill:triage", "ep-1"} <= refs
    broad = dict(rows(home, "SELECT ref, broad FROM graph_nodes WHERE layer = 1"))
    assert broad["summary:deploy"] == 1 and broad[ids["topic-4"]] == 0  # a summary is broad
    count = read(home, lambda c: graph.counts(c, NS))
    assert list(count) == ["entities", "facets", "facetpoints", "episodes", "edges"]
    live = rows(home, "SELECT count(*) FROM graph_nodes WHERE layer = 1 AND current = 1")
    assert count["episodes"] == live[0][0] == len(refs) - 2  # the two superseded facts are not
    assert count["edges"] == len(rows(home, "SELECT 1 FROM graph_edges"))


async def test_a_superseded_value_is_not_current_and_not_returned(
    rv: reverie.Reverie, clock: ManualClock, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    ids = await week(rv, clock)
    old, new = ids["topic-0"], ids["topic-6"]
    current = dict(rows(home, "SELECT ref, current FROM graph_nodes WHERE layer = 1"))
    assert current[old] == 0 and current[new] == 1
    hits = await rv.namespace(NS).search("billing deploy timeout", k=10, mode="bundle")
    found = [h.id for h in hits]
    assert new in found and old not in found
    assert not any("30s" in h.text or "45s" in h.text for h in hits if h.kind == "fact")


async def test_a_build_is_incremental_and_idempotent(
    rv: reverie.Reverie, clock: ManualClock, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    ns = rv.namespace(NS)
    await week(rv, clock)
    assert await rv.services.bus.ask(GraphDue(NS)) == 0  # built at idle: nothing left
    before = rows(home, "SELECT * FROM graph_nodes ORDER BY id")
    edges = rows(home, "SELECT * FROM graph_edges ORDER BY id")
    marks = dict(rows(home, "SELECT source, mark FROM graph_marks"))
    assert marks["facts"] == rows(home, "SELECT max(rowid) FROM facts")[0][0]
    assert marks["entries"] == 2 and marks["turns"] == 2
    async with ns.session("late") as s:
        ok(
            await s.call_tool("topic", topic("ledger", "The ledger replica lives in Frankfurt")),
            "ADD",
        )
        changed = await rv.services.bus.ask(GraphDue(NS))  # before the session ends
        assert changed > 0
    after = rows(home, "SELECT * FROM graph_nodes ORDER BY id")
    summary = {r[0] for r in after if r[3] == "summary"}  # the ledger's summary is rewritten
    assert [r for r in after[: len(before)] if r[0] not in summary] == [
        r for r in before if r[0] not in summary
    ]  # what was there is untouched
    kept = set(rows(home, "SELECT * FROM graph_edges ORDER BY id"))
    assert {e for e in edges if e[3] not in summary} <= kept
    assert dict(rows(home, "SELECT source, mark FROM graph_marks"))["facts"] == marks["facts"] + 1
    assert await rv.services.bus.ask(GraphDue(NS)) == 0


async def test_the_graph_is_projected_to_its_files(
    rv: reverie.Reverie, clock: ManualClock, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    await week(rv, clock)
    folder = home / NS / "graph"
    names_ = {"entities", "facets", "facetpoints", "episodes", "edges", "index"}
    assert {p.stem for p in folder.glob("*.json")} == names_
    index = json.loads((folder / "index.json").read_text())
    count = read(home, lambda c: graph.counts(c, NS))
    assert index["counts"] == count
    assert index["watermarks"]["facts"] == rows(home, "SELECT max(rowid) FROM facts")[0][0]
    entities = json.loads((folder / "entities.json").read_text())
    assert {e["key"] for e in entities} == keys(home, 4)
    edges = json.loads((folder / "edges.json").read_text())
    assert len(edges) == count["edges"] and all(e["description"] for e in edges)
    episodes = json.loads((folder / "episodes.json").read_text())
    assert sum(e["current"] for e in episodes) == count["episodes"]


async def test_reindex_rebuilds_the_graph_from_the_stores(
    rv: reverie.Reverie, clock: ManualClock, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    await week(rv, clock)
    before = read(home, lambda c: graph.counts(c, NS))
    labels_before = labels(home, 3)
    with write_db(home) as conn:  # a damaged graph: an edge and a facet point gone
        conn.execute("DELETE FROM graph_edges WHERE id = (SELECT max(id) FROM graph_edges)")
    done = await rv.namespace(NS).reindex()
    assert done["graph"] > 0
    assert read(home, lambda c: graph.counts(c, NS)) == before
    assert labels(home, 3) == labels_before


async def test_health_counts_links_components_and_reach(
    rv: reverie.Reverie, tmp_path: Path
) -> None:
    """By hand: entity E → facet F → episodes 1 and 2; episode 3 hangs from a facet point
    with no entity above it; episode 4 stands alone; node X is a lone entity. Four
    components: {E, F, 1, 2}, {P, 3}, {4}, {X}; a not-current episode is left out."""
    home = tmp_path / "home"
    when = "2026-01-01T00:00:00+00:00"
    with write_db(home) as conn:
        made: dict[str, int] = {}
        for name, layer, current in [
            ("E", 4, 1), ("F", 2, 1), ("1", 1, 1), ("2", 1, 1), ("P", 3, 1), ("3", 1, 1),
            ("4", 1, 1), ("X", 4, 1), ("old", 1, 0),
        ]:  # fmt: skip
            made[name] = int(
                conn.execute(
                    "INSERT INTO graph_nodes (namespace, layer, kind, key, label, current,"
                    " created_at, updated_at) VALUES (?, ?, 'k', ?, ?, ?, ?, ?)",
                    (NS, layer, name, name, current, when, when),
                ).lastrowid
                or 0
            )
        for src, dst in [("E", "F"), ("F", "1"), ("F", "2"), ("P", "3"), ("F", "old")]:
            conn.execute(
                "INSERT INTO graph_edges (namespace, src, dst, description, cost, created_at)"
                " VALUES (?, ?, ?, 'why', 0.1, ?)",
                (NS, made[src], made[dst], when),
            )
    got = read(home, lambda c: graph.health(c, NS))
    assert got == graph.GraphHealth(episodes=4, linked=3, nodes=8, components=4, reachable=2)


async def test_an_old_home_gains_the_graph_when_opened(
    rv: reverie.Reverie, clock: ManualClock, tmp_path: Path
) -> None:
    """Migration 10 over a home written before it: the tables are made when it is opened,
    and the first build reads every source from its beginning."""
    home = tmp_path / "home"
    ns = rv.namespace(NS)
    async with ns.session("s") as s:
        ok(await s.call_tool("topic", topic("deploy", "The billing deploy timeout is 30s")), "ADD")
    await rv.wait_idle()
    await rv.__aexit__(None, None, None)
    with write_db(home) as conn:  # back to schema 9
        for name in ("graph_node_indexed", "graph_node_relabelled", "graph_node_dropped"):
            conn.execute(f"DROP TRIGGER {name}")
        for name in ("graph_edge_indexed", "graph_edge_dropped"):
            conn.execute(f"DROP TRIGGER {name}")
        for name in ("graph_edges", "graph_nodes", "graph_marks", "graph_text"):
            conn.execute(f"DROP TABLE {name}")
        conn.execute("DELETE FROM schema_version WHERE version >= 10")  # later ones run again
    async with reverie.open(home, clock=clock) as again:
        hits = await again.namespace(NS).search("billing timeout", k=3, mode="bundle")
        assert [h.text for h in hits] == ["The billing deploy timeout is 30s"]


# ---- the rules -----------------------------------------------------------------------------


def test_keywords_are_the_first_content_words_one_per_stem() -> None:
    text = "The deploys deploy timeouts of the billing service, retries, queues, workers, caches"
    text += ", shards and replicas"
    got = keywords(text)
    assert got[:3] == ["deploys", "timeouts", "billing"]
    assert len(got) == KEYWORDS == 8


def test_a_name_is_a_capital_inside_a_sentence_or_one_known() -> None:
    assert names("Yesterday we met Priya at the office.") == ["Priya"]
    assert names("Priya agreed.") == []  # a capital that only opens a sentence
    assert names("Priya agreed.", frozenset({"Priya"})) == ["Priya"]


async def test_a_long_turn_is_a_broad_episode(rv: reverie.Reverie, tmp_path: Path) -> None:
    ns = rv.namespace(NS)
    long = "We talked about the release plan in detail. " * (BROAD_CHARS // 40)
    short = "We talked about the release plan."
    async with ns.session("s") as s:
        await s.turn(user=long[: BROAD_CHARS - len("user: ")])
        await s.turn(user=long)
        await s.turn(user=short)
        await s.idle()
    await rv.wait_idle()
    broad = dict(rows(tmp_path / "home", "SELECT ref, broad FROM graph_nodes WHERE layer = 1"))
    assert broad == {"ep-1": 0, "ep-2": 1, "ep-3": 0}


def test_a_unit_hangs_from_its_home_and_the_people_it_names() -> None:
    from reverie.rules.cone import nodes_and_edges

    unit = Unit("fact:f", "fact", "f", "the timeout is 45s", ("correction",),
                (Scope("project", "deploy"), Scope("name", "Priya")))  # fmt: skip
    nodes, edges = nodes_and_edges(unit)
    assert {n.key for n in nodes if n.layer == 2} == {"project.deploy/correction",
                                                       "name.priya/correction"}  # fmt: skip
    assert {n.key for n in nodes if n.layer == 3} == {"correction.timeout", "correction.45s"}
    descriptions = {e.description for e in edges}
    assert "a correction naming Priya about timeout, 45s" in descriptions
    assert "timeout corrections in deploy" in descriptions


async def test_a_tip_node_keeps_the_words_it_was_made_with(
    rv: reverie.Reverie, tmp_path: Path
) -> None:
    """A facet point is keyed by its word's stem; a later unit saying the word otherwise
    reuses it as it is (no relabel, so a build of nothing new changes nothing)."""
    home = tmp_path / "home"
    ns = rv.namespace(NS)
    async with ns.session("s") as s:
        ok(await s.call_tool("topic", topic("ops", "Nightly deploys are frozen")), "ADD")
        assert await rv.services.bus.ask(GraphDue(NS)) > 0
        ok(await s.call_tool("topic", topic("ops", "Each deploy needs a ticket number")), "ADD")
        assert await rv.services.bus.ask(GraphDue(NS)) > 0
    point = rows(home, "SELECT label, created_at = updated_at FROM graph_nodes WHERE key = ?",
                 "fact.deploy")  # fmt: skip
    assert point == [("fact deploys", 1)]


# ---- refined by a configured model ---------------------------------------------------------


class Namer:
    """A hosted model's stand-in (it cannot run here): names each episode's entity and
    facet — once with the episode's own words, once with a word it does not carry — and
    answers every other question as the offline model does."""

    name = "namer"

    def __init__(self) -> None:
        self.asked: list[list[dict[str, Any]]] = []

    async def judge(self, prompt: Any) -> Any:
        from reverie.model.offline import OfflineModel
        from reverie.model.seam import Answer, Usage

        if prompt.stage != "graph":
            return await OfflineModel().judge(prompt)
        units = prompt.payload["units"]
        self.asked.append(units)
        names_ = []
        for unit in units:
            if "Frankfurt" in unit["text"]:
                names_.append({"id": unit["id"], "kind": "system", "entity": "ledger replica",
                               "facet": "replica in Frankfurt"})  # fmt: skip
            else:
                names_.append({"id": unit["id"], "kind": "tool", "entity": "kubernetes",
                               "facet": "cluster settings"})  # fmt: skip
        return Answer({"reasoning": "r", "names": names_}, Usage(calls=1), self.name)


async def test_a_configured_model_names_entities_only_in_the_sources_words(
    tmp_path: Path, clock: ManualClock
) -> None:
    """On an asked build (the dream's), a model other than the offline one is asked to
    name new episodes' entity and facet; a name made of the episode's words is kept (an
    entity, a facet, described edges down to the episode), one with a word it does not
    carry is not; episodes once asked are not asked again; a session's end, a search and
    ``graph.model_names = false`` ask nothing."""
    home, namer = tmp_path / "home", Namer()
    async with reverie.open(home, clock=clock, model=namer) as rv:
        ns = rv.namespace(NS)
        async with ns.session("s") as s:
            ok(await s.call_tool("topic", topic("ledger", "The ledger replica lives in Frankfurt")),
               "ADD")  # fmt: skip
            ok(await s.call_tool("topic", topic("deploy", "The deploy timeout is 30s")), "ADD")
        await rv.wait_idle()
        await ns.search("ledger replica", mode="bundle")
        assert namer.asked == []  # the session's end and a search never ask
        assert await rv.services.bus.ask(GraphDue(NS)) > 0
        assert [len(units) for units in namer.asked] == [2]
        assert await rv.services.bus.ask(GraphDue(NS)) == 0  # nothing new to name
        assert len(namer.asked) == 1
        calls = await rv.model_calls(NS)
    entities = keys(home, 4)
    assert "system.ledger-replica" in entities and "tool.kubernetes" not in entities
    assert "replica in Frankfurt of system ledger replica" in described(home)
    assert "cluster settings" not in labels(home, 2)
    assert calls["grapher"]["calls"] >= 1


async def test_model_names_can_be_switched_off(tmp_path: Path, clock: ManualClock) -> None:
    namer = Namer()
    config = reverie.Config().with_section("graph", model_names=False)
    async with reverie.open(tmp_path / "home", clock=clock, model=namer, config=config) as rv:
        async with rv.namespace(NS).session("s") as s:
            ok(await s.call_tool("topic", topic("ledger", "The ledger replica lives in Frankfurt")),
               "ADD")  # fmt: skip
            assert await rv.services.bus.ask(GraphDue(NS)) > 0
    assert namer.asked == []


async def test_builds_between_dreams_mark_the_files_stale_and_an_ask_writes_them(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Invariant: rewriting the graph's files whole is the dear part of a build, so the
    builds on idle, at a session's end and for a search only mark them stale; a dream's
    ask (or ``reverie graph``) writes them, once."""
    from reverie.actors.grapher import UNPROJECTED

    home = tmp_path / "home"
    config = reverie.Config().with_section("dream", enabled=False)
    async with reverie.open(home, clock=clock, config=config) as rv:
        ns = rv.namespace(NS)
        async with ns.session("s") as s:
            ok(await s.call_tool("topic", topic("deploy", "The deploy timeout is 30s")), "ADD")
            await s.idle()
        await rv.wait_idle()
        folder = home / NS / "graph"
        stale = "SELECT value FROM review_state WHERE namespace = ? AND key = ?"
        assert read(home, lambda c: graph.counts(c, NS))["episodes"] >= 1
        assert not folder.exists() and rows(home, stale, NS, UNPROJECTED) == [("true",)]
        assert await ns.search("deploy timeout", mode="bundle")
        assert not folder.exists()  # a search never writes them
        await ns.graph()
        assert (folder / "index.json").is_file() and rows(home, stale, NS, UNPROJECTED) == []
