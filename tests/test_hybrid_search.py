"""Ranking: BM25 fused with vector ranks by reciprocal rank when an embedder is there, and
freshness always — a small decaying boost for recent rows, and the newer of two live hits
about one subject first."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import reverie
from reverie import Config, ManualClock
from reverie.embedding import OpenAIEmbedder
from reverie.stores.search import freshness, reciprocal_rank
from tests.conftest import ok
from tests.embed_server import EmbedServer
from tests.local_http import base_url, serving

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def server() -> Iterator[EmbedServer]:
    with serving(EmbedServer()) as running:
        yield running


@pytest.fixture
async def embedder(server: EmbedServer) -> AsyncIterator[OpenAIEmbedder]:
    async with OpenAIEmbedder(base_url(server), "concepts", retries=0) as client:
        yield client


async def save(ns: reverie.Namespace, topic: str, content: str) -> None:
    async with ns.session("s") as s:
        ok(
            await s.call_tool("topic", {"action": "save", "topic": topic, "content": content}),
            "ADD",
        )


async def remember(ns: reverie.Namespace, content: str) -> None:
    async with ns.session("s") as s:
        result = await s.call_tool(
            "memory", {"action": "add", "target": "memory", "content": content}
        )
        ok(result, "ADD")


def test_reciprocal_rank_rewards_agreement() -> None:
    fused = reciprocal_rank([1, 2, 3], [3, 4], k=60)
    assert [item for item, _ in fused] == [3, 1, 2, 4]
    assert fused[0][1] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[1][1] == pytest.approx(1 / 61)


async def test_hybrid_adds_what_bm25_misses(tmp_path: Path, embedder: OpenAIEmbedder) -> None:
    facts = [
        ("cars", "The car needs new tires"),
        ("fleet", "The automobile needs wheels"),
        ("parking", "The car park closes at nine on weekdays and at noon on sundays"),
        ("deploy", "The deploy timeout is 45s"),
    ]
    async with reverie.open(tmp_path / "bm25") as rv:
        for topic, text in facts:
            await save(rv.namespace(), topic, text)
        plain = [h.text for h in await rv.namespace().search("car tires")]
    async with reverie.open(tmp_path / "hybrid", embedder=embedder) as rv:
        for topic, text in facts:
            await save(rv.namespace(), topic, text)
        hybrid = await rv.namespace().search("car tires")
    assert "The automobile needs wheels" not in plain
    texts = [h.text for h in hybrid]
    assert texts[0] == "The car needs new tires"  # first in both lists
    assert "The automobile needs wheels" in texts  # a paraphrase BM25 cannot see
    assert "The deploy timeout is 45s" not in texts  # unrelated: under min_similarity
    assert [h.score for h in hybrid] == sorted((h.score for h in hybrid), reverse=True)


async def test_hybrid_hides_superseded_and_finds_nothing_for_nothing(
    tmp_path: Path, embedder: OpenAIEmbedder
) -> None:
    async with reverie.open(tmp_path / "home", embedder=embedder) as rv:
        ns = rv.namespace()
        await save(ns, "cars", "The car tires pressure is 30")
        async with ns.session("s") as s:
            content = "The car tires pressure is 35"
            result = await s.call_tool(
                "topic", {"action": "save", "topic": "cars", "content": content}
            )
            ok(result, "SUPERSEDE")
        hits = await ns.search("automobile wheels")
        assert [h.text for h in hits] == ["The car tires pressure is 35"]
        assert hits.hidden_superseded == 0  # BM25 matched no superseded text
        every = await ns.search("car tires", include_superseded=True)
        assert {h.text for h in every} == {
            "The car tires pressure is 35",
            "The car tires pressure is 30",
        }
        assert await ns.search("") == []


def test_freshness_decays_by_half_life() -> None:
    ranking = Config().ranking
    assert freshness(0.0) == pytest.approx(1 + ranking.recency_weight)
    assert freshness(ranking.recency_half_life_h) == pytest.approx(1 + ranking.recency_weight / 2)
    assert freshness(-5.0) == freshness(0.0)
    assert 1.0 <= freshness(24 * 365) < 1.0001
    assert ranking.recency_weight <= 0.1  # a tiebreaker, not a second relevance signal


async def test_older_exact_match_beats_newer_barely_related(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    async with reverie.open(tmp_path / "home", clock=clock) as rv:
        ns = rv.namespace()
        await remember(ns, "The staging deploy timeout is 45s")
        clock.advance(timedelta(days=60))
        await remember(ns, "Staging was quiet all afternoon")
        hits = await ns.search("staging deploy timeout 45s")
    assert [h.text for h in hits] == [
        "The staging deploy timeout is 45s",
        "Staging was quiet all afternoon",
    ]


@pytest.mark.parametrize("rule", [True, False])
async def test_newer_fact_about_one_subject_ranks_first(tmp_path: Path, rule: bool) -> None:
    """Two live facts share the subject 'deploy timeout' (in two topics, so neither
    supersedes the other); the older matches the query better, the newer must lead."""
    clock = ManualClock(T0)
    config = Config().with_section("ranking", same_subject_newer_first=rule)
    async with reverie.open(tmp_path / "home", config=config, clock=clock) as rv:
        ns = rv.namespace()
        await save(ns, "deploy", "The deploy timeout is 30s")
        clock.advance(timedelta(days=2))
        await save(ns, "ci", "The deploy timeout is 45s")
        hits = await ns.search("deploy timeout 30s")
    newer_first = ["The deploy timeout is 45s", "The deploy timeout is 30s"]
    if rule:
        assert [h.text for h in hits] == newer_first
        assert hits[0].written_at is not None and hits[0].written_at > hits[1].written_at  # type: ignore[operator]
    else:  # the scenario is one the rule decides: without it, BM25 puts the older first
        assert [h.text for h in hits] == newer_first[::-1]


ALPHA = "with the usual checks before every release and a note for the on call team"
BETA = "after nightly backups finish so that metrics collectors can scrape fresh numbers each hour"
OTHERS = (
    "Gamma backups run nightly to the cold bucket in the north region",
    "Delta metrics are kept for ninety days before they are rolled up",
    "Epsilon release notes live in the wiki under the ops space",
)


@pytest.mark.parametrize("weight", [None, 0.0])
async def test_recency_breaks_a_near_tie(tmp_path: Path, weight: float | None) -> None:
    """Two unrelated entries match the query equally but for one word of length (BM25
    ~2.5 % apart, the older ahead); a week of age is worth more than that by default."""
    clock = ManualClock(T0)
    config = Config()
    if weight is not None:
        config = config.with_section("ranking", recency_weight=weight)
    async with reverie.open(tmp_path / "home", config=config, clock=clock) as rv:
        ns = rv.namespace()
        for other in OTHERS:  # rows without the query's words, so its words weigh
            await remember(ns, other)
        await remember(ns, f"Alpha service port opens {ALPHA}")
        clock.advance(timedelta(days=7))
        await remember(ns, f"Beta service port opens daily {BETA}")
        hits = await ns.search("service port")
    order = [h.text.split()[0] for h in hits]
    assert order == (["Beta", "Alpha"] if weight is None else ["Alpha", "Beta"])


@pytest.mark.parametrize("rule", [True, False])
async def test_a_correction_in_another_topic_ranks_above_its_original(
    tmp_path: Path, rule: bool
) -> None:
    """A natural correction the flush could not put beside its original (another topic, no
    shared subject key): the supersede rule, read at search time, puts the newer first."""
    clock = ManualClock(T0)
    config = Config().with_section("ranking", same_subject_newer_first=rule)
    async with reverie.open(tmp_path / "home", config=config, clock=clock) as rv:
        ns = rv.namespace()
        await save(ns, "billing", "Our budget for software licenses is $5,000 for software")
        clock.advance(timedelta(days=2))
        await save(ns, "finance", "the budget for software licenses increased to $6,200")
        hits = await ns.search("software licenses budget")
    texts = [h.text for h in hits if h.kind == "fact"]
    assert ("$6,200" in texts[0]) is rule
