"""The embedding seam: the OpenAI-compatible client against a real local server (every
failure degrades to Deferred, never raises), vectors in a real SQLite file, the
similarity helpers, and the packaged WordLlama model when the ``embed`` extra is there."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

import reverie
from reverie.embedding import OpenAIEmbedder, cosine, nearest
from reverie.embedding.openai_compat import embeddings_url
from reverie.model.seam import Deferred
from tests.conftest import ok, rows, scalar
from tests.embed_server import DIM, FAIL, GOOD, MALFORMED, SLOW, WRONG_DIM, EmbedServer
from tests.local_http import base_url, serving


@pytest.fixture
def server() -> Iterator[EmbedServer]:
    with serving(EmbedServer(slow_s=1.0)) as running:
        yield running


def client(server: EmbedServer, **kwargs: float | int) -> OpenAIEmbedder:
    settings: dict[str, float | int] = {"timeout_s": 5.0, "retries": 0, "backoff_s": 0.0}
    settings.update(kwargs)
    return OpenAIEmbedder(base_url(server), "concepts", **settings)  # type: ignore[arg-type]


def test_embeddings_url_adds_v1_once() -> None:
    assert embeddings_url("http://h:1") == "http://h:1/v1/embeddings"
    assert embeddings_url("http://h:1/v1/") == "http://h:1/v1/embeddings"
    with pytest.raises(ValueError):
        OpenAIEmbedder("h:1", "m")


async def test_good_answer_is_ordered_unit_vectors(server: EmbedServer) -> None:
    async with client(server) as embedder:
        vectors = await embedder.embed(["car tires", "automobile wheels", "brief"])
    assert not isinstance(vectors, Deferred)
    assert len(vectors) == 3 and embedder.dim == DIM
    assert all(math.isclose(sum(x * x for x in v), 1.0) for v in vectors)
    assert cosine(vectors[0], vectors[1]) > 0.99  # the server answered in reverse order
    assert cosine(vectors[0], vectors[2]) < 0.01
    assert server.seen == [("/v1/embeddings", GOOD, 3)]


@pytest.mark.parametrize("mode", [FAIL, MALFORMED, WRONG_DIM])
async def test_failures_defer_and_never_raise(server: EmbedServer, mode: str) -> None:
    async with client(server, dim=DIM) as embedder:
        server.script = [mode]
        answer = await embedder.embed(["car"])
        assert isinstance(answer, Deferred), answer
        assert embedder.dim == DIM
        again = await embedder.embed(["car"])  # the next good answer is used
        assert not isinstance(again, Deferred)


async def test_retries_reach_a_good_answer(server: EmbedServer) -> None:
    server.script = [FAIL, MALFORMED]
    async with client(server, retries=2) as embedder:
        vectors = await embedder.embed(["car"])
    assert not isinstance(vectors, Deferred)
    assert [mode for _, mode, _ in server.seen] == [FAIL, MALFORMED, GOOD]


async def test_timeout_and_unreachable_defer(server: EmbedServer) -> None:
    server.script = [SLOW]
    async with client(server, timeout_s=0.2) as embedder:
        answer = await embedder.embed(["car"])
    assert isinstance(answer, Deferred) and "time" in answer.reason
    async with OpenAIEmbedder("http://127.0.0.1:9", "m", retries=0) as gone:
        refused = await gone.embed(["car"])
    assert isinstance(refused, Deferred) and "reached" in refused.reason


async def test_empty_input_makes_no_call(server: EmbedServer) -> None:
    async with client(server) as embedder:
        assert await embedder.embed([]) == []
    assert server.seen == []


def vector_rows(home: Path) -> list[tuple[int, str, str, int]]:
    return rows(home, "SELECT rid, embedder, namespace, dim FROM vectors ORDER BY embedder, rid")


async def save_facts(rv: reverie.Reverie, *texts: str) -> None:
    async with rv.namespace("n").session("s") as s:
        for i, text in enumerate(texts):
            result = await s.call_tool(
                "topic", {"action": "save", "topic": f"t{i}", "content": text}
            )
            ok(result, "ADD")


async def test_vectors_live_in_sqlite_and_follow_the_embedder(
    tmp_path: Path, server: EmbedServer
) -> None:
    home = tmp_path / "home"
    async with client(server) as embedder, reverie.open(home, embedder=embedder) as rv:
        await save_facts(rv, "The car has new tires", "The deploy timeout is 45s")
        assert vector_rows(home) == []  # nothing is embedded on the write path
        hits = await rv.namespace("n").search("automobile tires")
        assert hits and hits[0].text == "The car has new tires"
    rows = vector_rows(home)
    assert [(e, ns, d) for _, e, ns, d in rows] == [("concepts", "n", DIM)] * 2
    blob = scalar(home, "SELECT vector FROM vectors LIMIT 1")
    assert len(blob) == 4 * DIM  # float32
    renamed = OpenAIEmbedder(base_url(server), "concepts-v2", retries=0)
    async with renamed, reverie.open(home, embedder=renamed) as rv:
        await rv.namespace("n").search("car")
    assert sorted({e for _, e, _, _ in vector_rows(home)}) == ["concepts", "concepts-v2"]


@pytest.mark.parametrize("breaker_s", [0.0, 3600.0])
async def test_a_failing_embedder_leaves_bm25_and_pending_rows(
    tmp_path: Path, server: EmbedServer, breaker_s: float
) -> None:
    """A failure costs one call: the search ranks by BM25, the rows stay pending, and the
    embedder is not asked again until its breaker has cooled."""
    home = tmp_path / "home"
    config = reverie.Config().with_section("embedder", breaker_s=breaker_s)
    async with client(server) as embedder, reverie.open(home, config, embedder=embedder) as rv:
        await save_facts(rv, "The car has new tires")
        server.script = [FAIL]
        hits = await rv.namespace("n").search("car tires")
        assert [h.text for h in hits] == ["The car has new tires"]
        assert vector_rows(home) == []
        assert [mode for _, mode, _ in server.seen] == [FAIL]  # not asked again that search
        again = await rv.namespace("n").search("car tires")
        assert [h.text for h in again] == ["The car has new tires"]
    if breaker_s:
        assert len(server.seen) == 1 and vector_rows(home) == []
    else:
        assert len(vector_rows(home)) == 1


async def test_a_slow_embedder_is_cut_at_the_search_budget(
    tmp_path: Path, server: EmbedServer
) -> None:
    home = tmp_path / "home"
    config = reverie.Config().with_section("embedder", search_budget_s=0.1)
    async with client(server) as embedder, reverie.open(home, config, embedder=embedder) as rv:
        await save_facts(rv, "The car has new tires")
        server.script = [SLOW]
        hits = await rv.namespace("n").search("car tires")
    assert [h.text for h in hits] == ["The car has new tires"]
    assert vector_rows(home) == []


async def test_config_turns_the_remote_embedder_on(tmp_path: Path, server: EmbedServer) -> None:
    config = reverie.Config.from_mapping(
        {"embedder": {"enabled": True, "url": base_url(server), "name": "concepts", "retries": 0}}
    )
    async with reverie.open(tmp_path / "home", config=config) as rv:
        assert isinstance(rv.embedder, OpenAIEmbedder)
        await save_facts(rv, "The car has new tires")
        await rv.namespace("n").search("vehicle")
    assert len(vector_rows(tmp_path / "home")) == 1
    async with reverie.open(tmp_path / "off") as rv:
        assert rv.embedder is None and rv.vectors is None


async def test_nearest_finds_live_rows_by_kind(tmp_path: Path, server: EmbedServer) -> None:
    home = tmp_path / "home"
    async with client(server) as embedder, reverie.open(home, embedder=embedder) as rv:
        await save_facts(rv, "The car has new tires", "Replies should be terse")
        ns = rv.namespace("n")
        await ns.search("car")  # embeds the namespace
        [query] = await embedder.embed(["brief"])  # type: ignore[misc]
        found = await rv.services.db.read(
            lambda conn: nearest(conn, "n", query, embedder.name, kind="fact", k=1)
        )
        none = await rv.services.db.read(
            lambda conn: nearest(conn, "n", query, embedder.name, kind="entry", k=1)
        )
    assert [(n.kind, n.text) for n in found] == [("fact", "Replies should be terse")]
    assert found[0].id.startswith("fct-") and 0 < found[0].similarity <= 1.0
    assert none == []


async def test_index_nearest_embeds_then_answers(tmp_path: Path, server: EmbedServer) -> None:
    """What the writer or flusher would call: text in, nearest live rows out."""
    home = tmp_path / "home"
    async with client(server) as embedder, reverie.open(home, embedder=embedder) as rv:
        await save_facts(rv, "The car has new tires", "Replies should be terse")
        assert rv.vectors is not None
        near = await rv.vectors.nearest("n", "automobile wheels", kind="fact", k=2)
        assert [n.text for n in near] == ["The car has new tires", "Replies should be terse"]
        close = await rv.vectors.nearest("n", "automobile wheels", min_similarity=0.5)
        assert [n.text for n in close] == ["The car has new tires"]
        server.script = [FAIL]
        rv.vectors.breaker_s = 0.0
        assert await rv.vectors.nearest("n", "a brand new question") == []


def test_cosine() -> None:
    assert cosine([1.0, 0.0], [2.0, 0.0]) == pytest.approx(1.0)
    assert cosine([1.0, 0.0], [0.0, 3.0]) == pytest.approx(0.0)
    assert cosine([1.0, 0.0], [-1.0, 0.0]) == pytest.approx(-1.0)
    assert cosine([0.0, 0.0], [1.0, 0.0]) == 0.0
    assert cosine([1.0], [1.0, 0.0]) == 0.0


async def test_wordllama_offline_paraphrase() -> None:
    pytest.importorskip("wordllama")
    from reverie.embedding import WordLlamaEmbedder

    embedder = WordLlamaEmbedder()
    vectors = await embedder.embed(
        ["I like terse answers", "Prefers terse answers", "The deploy timeout is 45s"]
    )
    assert not isinstance(vectors, Deferred), vectors
    assert embedder.dim == 256 and all(len(v) == 256 for v in vectors)
    mine, paraphrase, other = vectors
    assert cosine(mine, paraphrase) > cosine(mine, other)
