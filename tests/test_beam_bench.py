"""The BEAM benches' metric code on a tiny synthetic conversation (no shared data needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench import beam, beam_updates

FILLER = [
    ("How do I sort a list in Python?", "Use sorted(items) or items.sort() in place."),
    ("What is a good name for a cat?", "Whiskers, Luna and Milo are popular cat names."),
    ("Tell me a fun fact about octopuses.", "Octopuses have three hearts and blue blood."),
]


def message(mid: int, role: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"id": mid, "role": role, "content": content, **extra}


def write_conversation(folder: Path) -> Path:
    """Batch 1: filler, then the budget (exchange 2 holds message 4); batch 2: the
    budget update (message 10) and more filler."""
    first = [
        [
            message(0, "user", f"{FILLER[0][0]} ->-> 1,1", time_anchor="March-15-2024"),
            message(1, "assistant", FILLER[0][1]),
        ],
        [message(2, "user", f"{FILLER[1][0]} ->-> 1,2"), message(3, "assistant", FILLER[1][1])],
        [
            message(4, "user", "My monthly grocery budget is 400 dollars at Kroger. ->-> 1,3"),
            message(5, "assistant", "Noted: a 400 dollar grocery budget at Kroger."),
        ],
    ]
    second = [
        [
            message(6, "user", f"{FILLER[2][0]} ->-> 2,1", time_anchor="April-02-2024"),
            message(7, "assistant", FILLER[2][1]),
            message(8, "user", "Which sorting is stable? ->-> 2,2"),
            message(9, "assistant", "Python's sort is stable (Timsort)."),
        ],
        [
            message(10, "user", "Update: my monthly grocery budget at Kroger is now 450 dollars."),
            message(11, "assistant", "Got it, the grocery budget is now 450 dollars."),
        ],
    ]
    chat = [
        {"batch_number": 1, "time_anchor": None, "turns": first},
        {"batch_number": 2, "time_anchor": None, "turns": second},
    ]
    questions = {
        "information_extraction": [
            {
                "question": "What is my monthly grocery budget at Kroger?",
                "answer": "400 dollars at Kroger",
                "source_chat_ids": [4],
            }
        ],
        "knowledge_update": [
            {
                "question": "What is my monthly grocery budget now?",
                "answer": "450 dollars",
                "conversation_references": [
                    "Budget: Monthly grocery budget is 400 dollars at Kroger.",
                    "Information Update: The monthly grocery budget at Kroger is now 450 dollars.",
                ],
                "source_chat_ids": {"original_info": [4], "updated_info": [10]},
            }
        ],
        "abstention": [{"question": "What is my dog's name?", "ideal_response": "Unknown."}],
    }
    folder.mkdir(parents=True)
    (folder / "chat.json").write_text(json.dumps(chat))
    (folder / "probing_questions.json").write_text(json.dumps(questions))
    return folder


def test_loading_pairs_exchanges_and_maps_evidence(tmp_path: Path) -> None:
    conv = beam.load_conversation(write_conversation(tmp_path / "1"))
    assert [len(b.exchanges) for b in conv.batches] == [3, 3]
    assert [b.anchor.month for b in conv.batches if b.anchor] == [3, 4]
    assert all("->->" not in x.user for x in conv.exchanges)
    assert conv.by_message()[4].index == 2
    assert (conv.by_message()[8].session_id, conv.by_message()[8].turn) == ("b2", 1)
    ku = next(q for q in conv.questions if q.category == "knowledge_update")
    assert ku.evidence == {4, 10} and ku.original == {4} and ku.updated == {10}


def test_bm25_baseline_finds_the_obvious_evidence(tmp_path: Path) -> None:
    conv = beam.load_conversation(write_conversation(tmp_path / "1"))
    bm25 = beam.Bm25(conv.exchanges)
    found = [{i} for i in bm25.search("What is my monthly grocery budget at Kroger?", 10)]
    bm25.close()
    assert beam.recall_at(found, {2}, 5) == 1.0
    assert beam.recall_at(found, {2, 99}, 5) == 0.5
    assert beam.recall_at([{0}, {1}], {2}, 5) == 0.0


def test_answer_and_junk_checks() -> None:
    assert beam.distinctive("It is 1,200 calls per day since March 3") >= {"1200", "mar", "3"}
    assert beam.holds({"450"}, set(), "The budget is now 450 dollars.")
    assert not beam.holds({"450"}, set(), "The budget is 400 dollars.")
    assert beam.junk_reason("return jsonify(data), 200") == "code"
    assert beam.junk_reason("Here's the updated code:") == "lead-in"
    assert beam.junk_reason("| Name | Value |") == "table"
    assert beam.junk_reason("The user lives in Lyon and works at a bakery.") is None
    assert beam.is_request("I'm trying to fix my build, can you help me with that?")
    assert not beam.is_request("The user lives in Lyon.")


async def test_bench_on_a_tiny_conversation(tmp_path: Path) -> None:
    conv = beam.load_conversation(write_conversation(tmp_path / "data" / "1"))
    result = await beam.run_conversation(conv, tmp_path / "home")
    d = beam.derive(result)
    assert result["turns"] == 6 and result["questions"] == 2
    assert d["baseline"][0] == 1.0  # both questions' evidence is in BM25's top 5
    shares = [*d["recall"], *d["baseline"], d["flush_reach"], d["junk"], d["assistant_share"]]
    shares += [v for v in (d["held"], d["update_first"]) if v is not None]
    assert all(0.0 <= v <= 1.0 for v in shares)
    total = beam.derive(beam.total([result]))
    assert total["recall"] == d["recall"]


async def test_updates_bench_on_a_tiny_conversation(tmp_path: Path) -> None:
    conv = beam.load_conversation(write_conversation(tmp_path / "1"))
    pairs = beam_updates.pairs_of(conv)
    assert len(pairs) == 1
    assert pairs[0].original == "Monthly grocery budget is 400 dollars at Kroger."
    assert pairs[0].updated == "The monthly grocery budget at Kroger is now 450 dollars."
    outcomes = await beam_updates.run_pairs(pairs, tmp_path / "home")
    s = beam_updates.summary(outcomes)
    assert outcomes[0].decision in {"SUPERSEDE", "ADD", "NOOP", "ERROR"}
    assert 0.0 <= s["supersede"] <= 1.0 and 0.0 <= s["new_first"] <= 1.0
    assert sum(s["decisions"].values()) == 1
