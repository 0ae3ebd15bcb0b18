"""LoCoMo (read in place from the shared data, skipped when absent): one conversation's
observations through the topic tool keep plain BM25's evidence recall, and saving them
again changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import reverie
from bench.locomo import bm25_baseline, evaluate, ingest


@pytest.fixture
def locomo(shared_data: Path) -> Path:
    path = shared_data / "locomo10.json"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    return path


async def test_one_conversation_keeps_bm25_recall_and_reingests_as_noop(
    tmp_path: Path, locomo: Path
) -> None:
    data = json.loads(locomo.read_text())[:1]
    baseline = bm25_baseline(data, tmp_path / "bm25.db")
    async with reverie.open(tmp_path / "home") as rv:
        sources, first = await ingest(rv, data)
        ours, questions = await evaluate(rv, data, sources, include_superseded=False)
        _, second = await ingest(rv, data)
    assert questions > 100
    assert first["ADD"] > 0.95 * sum(first.values())  # narrative facts accumulate
    for mine, reference in zip(ours, baseline, strict=True):
        assert mine >= 0.97 * reference, (ours, baseline)
    assert second["NOOP"] >= 0.99 * sum(second.values()), second
