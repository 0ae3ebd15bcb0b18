"""The embedding seam in the flush (background only, never the write path): a paraphrase of
a live entry is not stored again, and a statement goes to the topic of the fact nearest in
meaning. Against a real local /v1/embeddings server that embeds by concept."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import reverie
from reverie import Config, ManualClock
from reverie.embedding import OpenAIEmbedder
from tests.conftest import ok
from tests.embed_server import EmbedServer
from tests.local_http import base_url, serving


@pytest.fixture
def server() -> Iterator[EmbedServer]:
    with serving(EmbedServer(slow_s=1.0)) as running:
        yield running


def embedder(server: EmbedServer) -> OpenAIEmbedder:
    return OpenAIEmbedder(base_url(server), "concepts", timeout_s=5.0, retries=0, backoff_s=0.0)


async def flush_preference(home: Path, clock: ManualClock, found: OpenAIEmbedder | None) -> int:
    async with reverie.open(home, clock=clock, embedder=found) as rv:
        ns = rv.namespace("a")
        async with ns.session("s") as s:
            add = {"action": "add", "target": "user", "content": "I like terse replies"}
            ok(await s.call_tool("memory", add), "ADD")
        async with ns.session("s2") as s:
            await s.turn(user="I like brief replies.")
            await s.idle()
            await rv.wait_idle()
        return len(await ns.entries("user"))


async def test_a_paraphrased_entry_is_not_stored_twice(
    tmp_path: Path, clock: ManualClock, server: EmbedServer
) -> None:
    """Invariant: with the seam, a candidate near a live entry (paraphrase) is skipped."""
    assert await flush_preference(tmp_path / "rules", clock, None) == 2  # rules alone: 2
    assert await flush_preference(tmp_path / "seam", clock, embedder(server)) == 1


async def garage_facts(home: Path, clock: ManualClock, found: OpenAIEmbedder | None) -> int:
    config = Config().with_section("embedder", route_similarity=0.4)
    async with reverie.open(home, clock=clock, embedder=found, config=config) as rv:
        ns = rv.namespace("a")
        async with ns.session("s") as s:
            save = {"action": "save", "topic": "garage", "content": "The car has new tires"}
            ok(await s.call_tool("topic", save), "ADD")
            await s.turn(user="The automobile tires are rated for 2 winters.")
            await s.idle()
            await rv.wait_idle()
        return len(await ns.facts("garage"))


async def test_a_statement_goes_to_the_topic_of_its_nearest_fact(
    tmp_path: Path, clock: ManualClock, server: EmbedServer
) -> None:
    """Invariant: with the seam, a statement near a live fact joins that fact's topic."""
    assert await garage_facts(tmp_path / "rules", clock, None) == 1  # a topic of its own
    assert await garage_facts(tmp_path / "seam", clock, embedder(server)) == 2
    assert ("/v1/embeddings", "good") in [(p, m) for p, m, _ in server.seen]
