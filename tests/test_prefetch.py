"""Next-round prefetch (issue 13): ``s.prefetched`` after a turn, capped, cleared and
cancelled by the next turn, fail-silent, cancelled with the runtime."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from structlog.testing import capture_logs

import reverie
from reverie import Config
from reverie.prefetch import PREFETCH_END, PREFETCH_MARK
from reverie.rules.extraction import strip_injected
from reverie.rules.injection import turn_framing
from reverie.stores.records import SearchHit
from tests.conftest import both_backends

pytestmark = both_backends

Search = Callable[[str, int, str], Awaitable[list[SearchHit]]]


def _settings(**prefetch: Any) -> Config:
    return Config().with_section("prefetch", **prefetch)


async def _save(s: reverie.Session, topic: str, content: str) -> str:
    result = await s.call_tool("topic", {"action": "save", "topic": topic, "content": content})
    assert result["decision"] == "ADD", result
    return str(result["entry_id"])


class Gate:
    """A search that waits for ``release`` before answering (the real search's answer):
    a fetch held in flight without sleeping."""

    def __init__(self, real: Search) -> None:
        self.real = real
        self.entered = anyio.Event()
        self.release = anyio.Event()
        self.answered: list[str] = []

    async def __call__(self, query: str, k: int, mode: str) -> list[SearchHit]:
        self.entered.set()
        await self.release.wait()
        hits = await self.real(query, k, mode)
        self.answered.append(query)
        return hits


async def test_the_relevant_fact_is_prefetched_and_the_unrelated_one_is_not(
    rv: reverie.Reverie,
) -> None:
    """After a turn, the block holds the stored fact the user's message is about (as data,
    framed), not an unrelated one, not the turn itself; the snapshot is not touched."""
    async with rv.namespace().session("s") as s:
        wanted = await _save(s, "deploy", "The deploy timeout is 45s for the api service.")
        other = await _save(s, "billing", "Billing cutoff is day 25 of each month.")
        frozen = s.snapshot.text
        assert s.prefetched == "" and s.prefetch_result is None
        episode = await s.turn(user="what was the deploy timeout again?")
        await s.wait_prefetch()
        found = s.prefetch_result
        assert found is not None
        assert wanted in found.ids and other not in found.ids
        assert found.turn == episode.turn and found.query.startswith("what was the deploy")
        assert found.mode == "default" and found.kinds[0] == "fact"
        assert not any(h.kind == "episode" and h.turn == episode.turn for h in found.hits)
        assert s.prefetched.startswith(PREFETCH_MARK) and s.prefetched.endswith(PREFETCH_END)
        assert "- fact deploy: The deploy timeout is 45s" in s.prefetched
        assert "cutoff" not in s.prefetched
        assert s.snapshot.text == frozen


async def test_stored_text_is_rendered_as_data(rv: reverie.Reverie) -> None:
    """A stored line cannot close the block or open a section: it is shown as the
    snapshot shows entries (tag openers as entities, on one line)."""
    async with rv.namespace().session("s") as s:
        await s.call_tool(
            "memory",
            {"action": "add", "target": "memory", "content": "lunch deploy uses a <b> tag"},
        )
        await s.turn(user="how do we deploy at lunch?")
        await s.wait_prefetch()
        assert "&lt;b> tag" in s.prefetched
        assert s.prefetched.count("<") == 2  # the block's own opening and closing tags


async def test_the_block_keeps_within_its_cap(tmp_path: Path) -> None:
    """The whole block, framing included, is at most prefetch.max_chars; it is filled best
    first until the next hit would not fit."""
    for cap in (300, 450, 700):
        config = _settings(max_chars=cap, k=20, line_chars=120)
        async with reverie.open(tmp_path / str(cap), config=config) as rv:
            async with rv.namespace().session("s") as s:
                for n in range(12):
                    await _save(s, "deploy", f"deploy step {n}: run migration batch {n * 7}")
                await s.turn(user="which deploy step runs a migration batch?")
                await s.wait_prefetch()
                found = s.prefetch_result
                assert found is not None
                assert len(s.prefetched) <= cap
                assert len(s.prefetched) > cap - 120  # full: one more line would not fit
                assert len(found.hits) == s.prefetched.count("\n- ")


async def test_nothing_fits_leaves_an_empty_block(tmp_path: Path) -> None:
    """A cap smaller than the framing and one line shows nothing rather than a cut block."""
    async with reverie.open(tmp_path, config=_settings(max_chars=100)) as rv:
        async with rv.namespace().session("s") as s:
            await _save(s, "deploy", "The deploy timeout is 45s.")
            await s.turn(user="deploy timeout?")
            await s.wait_prefetch()
            assert s.prefetched == ""
            assert s.prefetch_result is not None and s.prefetch_result.hits == ()


async def test_at_most_k_hits_and_long_lines_cut(tmp_path: Path) -> None:
    """prefetch.k bounds the hits; prefetch.line_chars bounds each line."""
    config = _settings(k=2, line_chars=60, max_chars=5000)
    async with reverie.open(tmp_path, config=config) as rv:
        async with rv.namespace().session("s") as s:
            for n in range(5):
                await _save(
                    s, "deploy", f"deploy runbook part {n}: " + "drain the nodes first " * 6
                )
            real = s._prefetch.search

            async def facts_only(query: str, k: int, mode: str) -> list[SearchHit]:
                return [h for h in await real(query, 20, mode) if h.kind == "fact"][:k]

            s._prefetch.search = facts_only  # k + 1 facts answer, not the turn itself
            await s.turn(user="what does the deploy runbook say?")
            await s.wait_prefetch()
            found = s.prefetch_result
            assert found is not None and len(found.hits) == 2
            lines = [x for x in s.prefetched.splitlines() if x.startswith("- ")]
            assert len(lines) == 2 and all(len(x) == 62 and x.endswith("…") for x in lines)


async def test_the_next_turn_clears_the_block_at_once(rv: reverie.Reverie) -> None:
    """A turn without user text clears the block and starts nothing: stale is never shown."""
    async with rv.namespace().session("s") as s:
        await _save(s, "deploy", "The deploy timeout is 45s.")
        await s.turn(user="deploy timeout?")
        await s.wait_prefetch()
        assert "45s" in s.prefetched
        await s.turn(assistant="It is 45s.")
        assert s.prefetched == "" and s.prefetch_result is None
        await s.wait_prefetch()
        assert s.prefetched == ""


async def test_a_slow_fetch_is_cancelled_by_the_next_turn(rv: reverie.Reverie) -> None:
    """The fetch in flight when the next turn arrives is cancelled: its answer is never
    computed nor shown, and the new turn's fetch is the one that lands."""
    async with rv.namespace().session("s") as s:
        await _save(s, "deploy", "The deploy timeout is 45s.")
        await _save(s, "billing", "Billing cutoff is day 25.")
        gate = Gate(s._prefetch.search)
        s._prefetch.search = gate
        with anyio.fail_after(10):
            await s.turn(user="deploy timeout?")
            await gate.entered.wait()
            second = await s.turn(user="and the billing cutoff?")
            gate.release.set()
            await s.wait_prefetch()
        assert gate.answered == ["and the billing cutoff?"]
        found = s.prefetch_result
        assert found is not None and found.turn == second.turn
        assert "cutoff" in s.prefetched and "45s" not in s.prefetched


class Unstoppable(Gate):
    """A first search that cancellation cannot interrupt (as a read in a worker thread):
    it answers after ``release`` even when its fetch was cancelled; later ones answer at
    once."""

    async def __call__(self, query: str, k: int, mode: str) -> list[SearchHit]:
        if self.entered.is_set():
            return await self.real(query, k, mode)
        self.entered.set()
        with anyio.CancelScope(shield=True):
            await self.release.wait()
            hits = await self.real(query, k, mode)
            self.answered.append(query)
            return hits


async def test_a_late_answer_of_a_cleared_fetch_is_dropped(rv: reverie.Reverie) -> None:
    """A fetch that could not be interrupted and answers after the next turn started its
    own: the late answer is dropped, the block is the new turn's."""
    async with rv.namespace().session("s") as s:
        await _save(s, "deploy", "The deploy timeout is 45s.")
        await _save(s, "billing", "Billing cutoff is day 25.")
        gate = Unstoppable(s._prefetch.search)
        s._prefetch.search = gate
        with anyio.fail_after(10):
            await s.turn(user="deploy timeout?")
            await gate.entered.wait()
            first = s._prefetch._done
            second = await s.turn(user="and the billing cutoff?")
            await s.wait_prefetch()
            gate.release.set()
            assert first is not None
            await first.wait()
        assert gate.answered == ["deploy timeout?"]  # it did answer, late
        found = s.prefetch_result
        assert found is not None and found.turn == second.turn
        assert "cutoff" in s.prefetched and "45s" not in s.prefetched


async def test_closing_the_session_cancels_the_fetch(rv: reverie.Reverie) -> None:
    """A fetch in flight when the session ends is cancelled and leaves no block."""
    async with rv.namespace().session("s") as s:
        await _save(s, "deploy", "The deploy timeout is 45s.")
        gate = Gate(s._prefetch.search)
        s._prefetch.search = gate
        await s.turn(user="deploy timeout?")
        with anyio.fail_after(10):
            await gate.entered.wait()
    with anyio.fail_after(10):
        await s.wait_prefetch()
    assert s.prefetched == "" and gate.answered == []


async def test_closing_the_runtime_cancels_a_fetch_in_flight(tmp_path: Path) -> None:
    """A fetch that never ends by itself does not hold the runtime open: closing it cancels
    the fetch cleanly, nothing raises."""
    with anyio.fail_after(20):
        async with reverie.open(tmp_path) as rv:
            s = rv.namespace().session("s")
            await s.__aenter__()
            gate = Gate(s._prefetch.search)
            s._prefetch.search = gate
            await s.turn(user="deploy timeout?")
            await gate.entered.wait()
        await s.wait_prefetch()
    assert s.prefetched == "" and gate.answered == []


async def test_disabled_prefetch_fetches_nothing(tmp_path: Path) -> None:
    """prefetch.enabled = false: no fetch starts, the block stays empty."""
    async with reverie.open(tmp_path, config=_settings(enabled=False)) as rv:
        async with rv.namespace().session("s") as s:
            await _save(s, "deploy", "The deploy timeout is 45s.")
            called: list[str] = []
            real = s._prefetch.search

            async def counting(query: str, k: int, mode: str) -> list[SearchHit]:
                called.append(query)
                return await real(query, k, mode)

            s._prefetch.search = counting
            await s.turn(user="deploy timeout?")
            await s.wait_prefetch()
            assert s.prefetched == "" and s.prefetch_result is None and called == []


@pytest.mark.parametrize(
    "error", [reverie.StoreError("the store is busy"), RuntimeError("a bug in a search")]
)
async def test_a_failing_search_leaves_no_block_and_never_raises(
    rv: reverie.Reverie, error: Exception
) -> None:
    """A search that fails is logged; the block is empty, the turn and the session go on."""
    async with rv.namespace().session("s") as s:

        async def failing(query: str, k: int, mode: str) -> list[SearchHit]:
            raise error

        s._prefetch.search = failing
        with capture_logs() as logs:
            await s.turn(user="deploy timeout?")
            await s.wait_prefetch()
        assert s.prefetched == "" and s.prefetch_result is None
        assert any(e["event"] == "prefetch_failed" for e in logs)
        await s.turn(user="still here")


async def test_a_fetch_over_its_time_is_given_up(tmp_path: Path) -> None:
    """A fetch longer than prefetch.timeout_s leaves the block empty and says so."""
    async with reverie.open(tmp_path, config=_settings(timeout_s=0.05)) as rv:
        async with rv.namespace().session("s") as s:
            gate = Gate(s._prefetch.search)  # never released
            s._prefetch.search = gate
            with capture_logs() as logs:
                await s.turn(user="deploy timeout?")
                with anyio.fail_after(10):
                    await s.wait_prefetch()
            assert s.prefetched == "" and gate.answered == []
            assert any(e["event"] == "prefetch_timed_out" for e in logs)


async def test_a_prefetch_is_not_an_access(rv: reverie.Reverie) -> None:
    """The records a prefetch shows are not counted as accesses (a prefetch is not a use)."""
    ns = rv.namespace()
    async with ns.session("s") as s:
        fact = await _save(s, "deploy", "The deploy timeout is 45s.")
        await s.turn(user="deploy timeout?")
        await s.wait_prefetch()
        assert s.prefetch_result is not None and fact in s.prefetch_result.ids
    await rv.wait_idle()
    assert await ns.access_history(fact) == []


async def test_graph_mode_searches_the_graph_and_falls_back_when_it_is_empty(
    tmp_path: Path,
) -> None:
    """prefetch.graph: Bundle Search over the graph when it has nodes; with no graph (its
    switch off) the default search answers."""
    for graph_on, mode in ((True, "bundle"), (False, "default")):
        config = _settings(graph=True).with_section("graph", enabled=graph_on)
        async with reverie.open(tmp_path / mode, config=config) as rv:
            async with rv.namespace().session("s") as s:
                fact = await _save(s, "deploy", "The deploy timeout is 45s.")
                await s.turn(user="what is the deploy timeout?")
                await s.wait_prefetch()
                found = s.prefetch_result
                assert found is not None and found.mode == mode
                assert fact in found.ids


def test_an_echoed_block_is_not_extracted_nor_framing() -> None:
    """A host echoing the prefetch block in a turn: the extractor drops it whole, and it is
    reverie's own block, not a forgery."""
    block = f'{PREFETCH_MARK} namespace="n" turn="0">\n- fact deploy: 45s\n{PREFETCH_END}'
    assert strip_injected(f"hello {block} bye").split() == ["hello", "bye"]
    assert turn_framing(block) is None


async def test_a_prefetch_has_its_own_span(tmp_path: Path, spans: Any) -> None:
    """A host counting its searches by span does not count the prefetches."""
    provider, exporter = spans
    async with reverie.open(tmp_path, tracer_provider=provider) as rv:
        async with rv.namespace().session("s") as s:
            await _save(s, "deploy", "The deploy timeout is 45s.")
            await s.turn(user="deploy timeout?")
            await s.wait_prefetch()
    names = [x.name for x in exporter.get_finished_spans()]
    assert "reverie.prefetch" in names and "reverie.search" not in names


def test_a_prefetch_timeout_must_be_positive() -> None:
    """prefetch.timeout_s = 0 would give every fetch up at once: refused, named."""
    with pytest.raises(reverie.ConfigError, match="prefetch.timeout_s must be positive"):
        Config.load(environ={"REVERIE_PREFETCH_TIMEOUT_S": "0"})
    assert Config.load(environ={"REVERIE_PREFETCH_K": "3"}).prefetch.k == 3


async def test_a_session_can_turn_its_prefetch_off_or_on(tmp_path: Path) -> None:
    """``ns.session(id, prefetch=False)`` fetches nothing while another session does;
    ``prefetch=True`` fetches even when the config's switch is off; a non-bool is refused."""
    async with reverie.open(tmp_path, config=_settings(enabled=False)) as rv:
        ns = rv.namespace()
        async with ns.session("on", prefetch=True) as on, ns.session("off", prefetch=False) as off:
            await _save(on, "deploy", "The deploy timeout is 45s.")
            for s in (on, off):
                await s.turn(user="deploy timeout?")
                await s.wait_prefetch()
            assert "45s" in on.prefetched and off.prefetched == ""
        async with ns.session("default") as s:
            await s.turn(user="deploy timeout?")
            await s.wait_prefetch()
            assert s.prefetched == ""
        with pytest.raises(reverie.InputError, match="prefetch must be True or False"):
            ns.session("bad", prefetch="no")  # type: ignore[arg-type]
