"""Seed 004's Bundle Search: its three principles on small graphs built by hand in a real
home's database (minimum path cost, the direct-hit penalty on a broad episode, edge
descriptions searchable), its limits, and ``ns.search(mode="bundle")`` through the facade."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest

import reverie
from reverie.errors import InputError
from reverie.stores import graph
from reverie.stores.bundle import BROAD_PENALTY, PER_LAYER
from tests.conftest import database, db_counts, ok, write_db

NS = "a"
WHEN = "2026-01-01T00:00:00+00:00"


class Hand:
    """A graph written row by row, each node by its label."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.ids: dict[str, int] = {}

    def node(self, layer: int, label: str, *, ref: str | None = None, broad: bool = False) -> int:
        kind = {4: "project", 3: "fact", 2: "fact", 1: "fact"}[layer]
        cursor = self.conn.execute(
            "INSERT INTO graph_nodes (namespace, layer, kind, key, label, ref, broad,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (NS, layer, kind, f"k{len(self.ids)}", label, ref, int(broad), WHEN, WHEN),
        )
        self.ids[label] = int(cursor.lastrowid or 0)
        return self.ids[label]

    def edge(self, src: str, dst: str, description: str, cost: float = 0.1) -> None:
        self.conn.execute(
            "INSERT INTO graph_edges (namespace, src, dst, description, cost, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (NS, self.ids[src], self.ids[dst], description, cost, WHEN),
        )


@pytest.fixture
async def home(tmp_path: Path) -> Path:
    """A home with its schema and nothing in it."""
    async with reverie.open(tmp_path / "home"):
        pass
    return tmp_path / "home"


@contextmanager
def hand(home: Path) -> Iterator[Hand]:
    with write_db(home) as conn:
        yield Hand(conn)


def search(home: Path, query: str, k: int = 10) -> list[graph.BundleHit]:
    with closing(sqlite3.connect(database(home))) as conn:
        conn.row_factory = sqlite3.Row
        return graph.bundle(conn, NS, query, k)


async def test_one_strong_chain_beats_many_weak_paths(home: Path) -> None:
    """Minimum path cost: an episode's cost is its cheapest path. Five weak facet points
    (each a poor match for the query) leading to one episode do not add up to beat the one
    episode reached by a single strong chain; the path returned is that chain."""
    with hand(home) as g:
        g.node(4, "project kestrel")
        g.node(2, "decisions in the project")
        g.node(1, "use the blue cluster for staging", ref="strong")
        g.edge("project kestrel", "decisions in the project", "project kestrel has decisions")
        g.edge("decisions in the project", "use the blue cluster for staging", "a decision")
        g.node(1, "the runner image is debian", ref="weak")
        for i in range(5):
            label = f"kestrel and word {i}"
            g.node(3, label)
            g.edge(label, "the runner image is debian", f"point {i}")
    hits = search(home, "kestrel")
    assert [h.id for h in hits] == ["strong", "weak"]
    strong, weak = hits
    assert strong.cost < weak.cost
    assert strong.path == (
        "project kestrel",
        "project kestrel has decisions",
        "decisions in the project",
        "a decision",
        "use the blue cluster for staging",
    )
    assert weak.path[0].startswith("kestrel and word") and len(weak.path) == 3


async def test_a_direct_hit_on_a_broad_summary_is_penalised(home: Path) -> None:
    """The direct-hit penalty: a broad episode (a topic summary) that the query's words hit
    directly — better than any other node — still ranks below a specific fact reached by
    an anchored path, by ``BROAD_PENALTY``."""
    with hand(home) as g:
        g.node(4, "project kestrel, its deploy")
        g.node(1, "the window opens at 09:00", ref="fact")
        g.edge("project kestrel, its deploy", "the window opens at 09:00", "a fact in it")
        g.node(1, "kestrel deploy", ref="sum", broad=True)
    hits = search(home, "kestrel deploy")
    assert [h.id for h in hits] == ["fact", "sum"]
    fact, summary = hits
    assert summary.path == (summary.text,)  # its own label: a direct hit
    assert summary.cost - BROAD_PENALTY < fact.cost  # without the penalty it would lead


async def test_a_query_matching_only_an_edge_description_finds_the_episode_below(
    home: Path,
) -> None:
    """Edges carry meaning: no node's label holds the query's words, one edge's description
    does, and the episode under that edge is found, its path starting at the edge."""
    with hand(home) as g:
        g.node(2, "facet seven")
        g.node(1, "the limit is 45s now", ref="below")
        g.node(1, "an unrelated note", ref="other")
        g.edge("facet seven", "the limit is 45s now", "timeout corrections in deploy")
        g.edge("facet seven", "an unrelated note", "a note")
    hits = search(home, "timeout corrections")
    assert [h.id for h in hits] == ["below"]
    assert hits[0].path == ("timeout corrections in deploy", "the limit is 45s now")


async def test_a_hub_leads_less_far_than_a_specific_node(home: Path) -> None:
    """A step's cost grows with the fan-out of its upper end: of two episodes under equally
    matched facet points, the one under the point that leads to it alone comes first."""
    with hand(home) as g:
        g.node(3, "kestrel alpha")
        g.node(3, "kestrel bravo")
        g.node(1, "one alone", ref="alone")
        g.edge("kestrel bravo", "one alone", "bravo's")
        for i in range(8):
            g.node(1, f"crowd {i}", ref=f"crowd-{i}")
            g.edge("kestrel alpha", f"crowd {i}", "alpha's")
    hits = search(home, "kestrel")
    assert hits[0].id == "alone"
    assert hits[0].cost < hits[1].cost


async def test_each_layer_gives_at_most_its_candidates(home: Path) -> None:
    """At most ``PER_LAYER`` hits are taken from a layer: of 120 episodes the query hits
    directly, 100 come back however many are asked for."""
    with hand(home) as g:
        for i in range(PER_LAYER + 20):
            g.node(1, f"kestrel note {i}", ref=f"n{i}")
    assert len(search(home, "kestrel", k=500)) == PER_LAYER


async def test_a_not_current_episode_is_never_returned(home: Path) -> None:
    with hand(home) as g:
        g.node(1, "kestrel old value", ref="old")
        g.node(1, "kestrel new value", ref="new")
        g.conn.execute("UPDATE graph_nodes SET current = 0 WHERE ref = 'old'")
    assert [h.id for h in search(home, "kestrel value")] == ["new"]


async def test_nothing_matched_or_nothing_asked_is_empty(home: Path) -> None:
    with hand(home) as g:
        g.node(1, "kestrel", ref="x")
    assert search(home, "zebra") == []
    assert search(home, "kestrel", k=0) == []


# ---- through the facade --------------------------------------------------------------------


async def test_bundle_mode_returns_search_hits_with_their_path(
    rv: reverie.Reverie, tmp_path: Path
) -> None:
    ns = rv.namespace(NS)
    async with ns.session("s") as s:
        args = {"action": "save", "topic": "deploy", "content": "The billing deploy timeout is 30s"}
        fid = ok(await s.call_tool("topic", args), "ADD")["entry_id"]
        await s.turn(user="We moved the ledger service to Postgres last week.", assistant="OK.")
    await rv.wait_idle()
    hits = await ns.search("billing timeout", k=5, mode="bundle")
    assert hits[0].id == fid and hits[0].kind == "fact" and hits[0].topic == "deploy"
    assert hits[0].path and hits[0].path[-1] == "The billing deploy timeout is 30s"
    assert 0 < hits[0].score <= 1
    turn = await ns.search("ledger postgres", k=5, mode="bundle")
    episode = next(h for h in turn if h.kind == "episode")
    assert (episode.session_id, episode.turn) == ("s", 0)
    default = await ns.search("billing timeout", k=5)
    assert all(h.path == () for h in default)  # the default search is unchanged


@pytest.mark.parametrize("mode", ["graph", "", None, 1, "BUNDLE"])
async def test_a_bad_mode_is_refused_and_writes_nothing(
    rv: reverie.Reverie, tmp_path: Path, mode: object
) -> None:
    ns = rv.namespace(NS)
    async with ns.session("s") as s:
        await s.turn(user="We moved the ledger service to Postgres last week.", assistant="OK.")
    await rv.wait_idle()
    home = tmp_path / "home"
    before = db_counts(home), _graph_rows(home)
    with pytest.raises(InputError, match="mode is one of default, bundle"):
        await ns.search("ledger", k=5, mode=mode)  # type: ignore[arg-type]
    await rv.wait_idle()
    assert (db_counts(home), _graph_rows(home)) == before


def _graph_rows(home: Path) -> tuple[int, ...]:
    with closing(sqlite3.connect(database(home))) as conn:
        return tuple(
            conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("graph_nodes", "graph_edges", "graph_marks", "graph_text")
        )


async def test_a_search_builds_only_when_something_changed(
    tmp_path: Path, clock: reverie.ManualClock, spans: Any
) -> None:
    """Bundle search asks the grapher first, so it sees what was just written; with
    nothing new since the last build the grapher's one read says so and no write
    transaction is taken."""
    provider, exporter = spans
    async with reverie.open(tmp_path / "home", clock=clock, tracer_provider=provider) as rv:
        ns = rv.namespace(NS)
        async with ns.session("s") as s:
            args = {"action": "save", "topic": "deploy", "content": "The deploy window is 09:00"}
            ok(await s.call_tool("topic", args), "ADD")
        await rv.wait_idle()
        exporter.clear()
        assert [h.text for h in await ns.search("deploy window", mode="bundle")] == [
            "The deploy window is 09:00"
        ]
        async with ns.session("s2") as s:
            args = {"action": "save", "topic": "deploy", "content": "Freeze starts on Friday"}
            ok(await s.call_tool("topic", args), "ADD")
            hits = await ns.search("freeze friday", mode="bundle")  # before any idle
            assert hits[0].text == "Freeze starts on Friday"
    asked = [
        span.attributes["reverie.graph.due"]
        for span in exporter.get_finished_spans()
        if span.name == "reverie.grapher GraphDue"
    ]
    assert asked == [False, True]


async def test_the_embedding_seam_adds_the_nearest_units_as_hits(tmp_path: Path) -> None:
    """With an embedder (here a real local server whose "automobile" lies near "car"), a
    query that no label's words match still finds the unit its vector is near."""
    from tests.embed_server import EmbedServer
    from tests.local_http import base_url, serving

    with serving(EmbedServer(slow_s=1.0)) as server:
        embedder = reverie.OpenAIEmbedder(base_url(server), "concepts", retries=0)
        async with embedder, reverie.open(tmp_path / "home", embedder=embedder) as rv:
            ns = rv.namespace(NS)
            async with ns.session("s") as s:
                args = {"action": "save", "topic": "garage", "content": "The car has new tires"}
                ok(await s.call_tool("topic", args), "ADD")
            await rv.wait_idle()
            hits = await ns.search("automobile", k=3, mode="bundle")
    assert [h.text for h in hits] == ["The car has new tires"]
    assert hits[0].path == ("The car has new tires",)  # entered at the episode itself


async def test_a_failed_build_leaves_the_search_to_the_graph_as_it_stands(
    rv: reverie.Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    from structlog.testing import capture_logs

    from reverie.stores import graph_build

    ns = rv.namespace(NS)
    async with ns.session("s") as s:
        args = {"action": "save", "topic": "deploy", "content": "The deploy window is 09:00"}
        ok(await s.call_tool("topic", args), "ADD")
    await rv.wait_idle()

    def broken(*_: object) -> int:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(graph_build, "build", broken)
    async with ns.session("s2") as s:
        args = {"action": "save", "topic": "deploy", "content": "Freeze starts on Friday"}
        ok(await s.call_tool("topic", args), "ADD")
        with capture_logs() as logs:
            hits = await ns.search("deploy window freeze", mode="bundle")
    assert [h.text for h in hits] == ["The deploy window is 09:00"]  # the graph before
    assert any(e["event"] == "graph_not_brought_up_to_date" for e in logs)
