"""Seed 003's pattern-detected trigger and seed 004's pattern library, the record files
(``index.jsonl``, the HOT session logs, the WARM/COLD JSONL) and ``reindex`` (issue 11)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

import reverie
from reverie import Config
from reverie.config import RecordsConfig
from reverie.stores.patterns import Sighting, groups, rarity, same_lesson
from tests.conftest import ok, write_db

SETTINGS = RecordsConfig()
BLUE = (
    "Actually, staging deploys go through the blue cluster, not the green one.",
    "No — staging deploys actually use the blue cluster.",
    "Correction: deploys to staging must go to the blue cluster.",
)


async def said(rv: reverie.Reverie, ns: reverie.Namespace, session: str, text: str) -> None:
    """One session in which the user says ``text``, ended."""
    async with ns.session(session) as s:
        await s.turn(user=text, assistant="Noted.")
    await rv.wait_idle()


def files(home: Path, namespace: str) -> dict[str, str]:
    folder = home / namespace
    return {
        str(p.relative_to(folder)): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file() and (p.parts[-2] in ("hot", "warm", "cold", "patterns", "memory"))
    }


def front_matter(text: str) -> dict[str, object]:
    head = text.split("---\n")[1]
    loaded = yaml.safe_load(head)
    assert isinstance(loaded, dict)
    return loaded


# ---- the same lesson -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (BLUE[0], BLUE[1], True),
        (BLUE[1], BLUE[2], True),
        (BLUE[1], "The blue team owns the billing service.", False),  # one word shared
    ],
)
def test_the_same_lesson_is_judged_by_shared_subject_words(a: str, b: str, same: bool) -> None:
    assert same_lesson(a, b, SETTINGS) is same


def test_the_overlap_and_the_word_floor_are_both_required() -> None:
    a, b = "Staging deploys use the blue cluster.", "Staging deploys use a ticket queue now."
    exact = dataclasses.replace(SETTINGS, pattern_overlap=0.6)
    assert same_lesson(a, b, exact)  # 3 of 5 subject words shared: 0.6
    assert not same_lesson(a, b, dataclasses.replace(SETTINGS, pattern_overlap=0.7))
    assert same_lesson("Blue cluster only.", "Use the blue cluster.", SETTINGS)  # two shared
    three = dataclasses.replace(SETTINGS, pattern_words=3)
    assert not same_lesson("Blue cluster only.", "Use the blue cluster.", three)


def test_words_every_session_uses_say_little_about_which_lesson() -> None:
    a, b = "Staging deploys use the blue cluster.", "Staging deploys need a ticket."
    assert same_lesson(a, b, SETTINGS)  # alike, by word count: 2 of 4
    everyday = {"stag": 0.1, "deploy": 0.1}
    assert not same_lesson(a, b, SETTINGS, everyday)
    said = [
        Sighting(f"x{i}", "insight", text, "medium", f"2026-01-0{i + 1}", frozenset({f"s{i}"}))
        for i, text in enumerate(
            [*(f"Staging deploys on day {i} went fine" for i in range(5)), *BLUE]
        )
    ]
    weights = rarity(said, SETTINGS)  # eight sessions: the words are told apart
    assert weights["deploy"] < weights["fine"] < weights["cluster"]  # in 8, 5, 3 sessions
    assert rarity(said[:5], SETTINGS) == {}  # five sessions: all weigh alike


# ---- pattern-detected ------------------------------------------------------------------------


async def test_one_correction_in_three_sessions_phrased_differently_is_a_pattern(
    rv: reverie.Reverie, tmp_path: Path
) -> None:
    ns = rv.namespace("a")
    for i, text in enumerate(BLUE[:2]):
        await said(rv, ns, f"s{i}", text)
    corrections = await ns.query("kind:correction sort:created:asc")
    assert len(corrections) == 2, [r.content for r in corrections]
    assert await ns.patterns() == []  # two sessions are not enough
    await said(rv, ns, "s2", BLUE[2])
    [pattern] = await ns.patterns()
    assert pattern.examples == tuple(
        r.id for r in await ns.query("kind:correction sort:created:asc")
    )
    assert len(pattern.examples) == 3 and pattern.sessions == 3
    assert {"blue", "cluster"} <= set(pattern.name.split("-")) & set(pattern.facets)
    assert pattern.response == BLUE[2] and "corrections about" in pattern.trigger
    record = await ns.record(pattern.id)
    assert record is not None and (record.kind, record.tier) == ("pattern", "warm")
    [row] = await ns.ledger(pattern.id)
    assert (row.actor, row.action, row.decision) == ("learner", "pattern", "ADD")
    text = (tmp_path / "home" / "a" / "patterns" / f"{pattern.id}.md").read_text()
    front = front_matter(text)
    assert front["examples"] == list(pattern.examples)
    assert (front["entity"], front["episode_id"]) == ("pattern", pattern.id)
    assert {"name", "trigger", "response", "created", "updated", "facets"} <= set(front)
    assert all(example in text for example in BLUE)


async def test_a_fourth_sighting_extends_the_pattern_and_an_unrelated_one_does_not(
    rv: reverie.Reverie,
) -> None:
    ns = rv.namespace("a")
    for i, text in enumerate(BLUE):
        await said(rv, ns, f"s{i}", text)
    [before] = await ns.patterns()
    await said(rv, ns, "s3", "Actually the payments service logs to Loki, not to Splunk.")
    fourth = "The blue cluster is where staging deploys go, never green."
    ok(await ns.learn(fourth, "correction"), "ADD")  # by hand: an occasion of its own
    await said(rv, ns, "s4", "Thanks.")
    [after] = await ns.patterns()
    assert after.id == before.id and len(after.examples) == 4 and after.sessions == 4
    assert [r.decision for r in await ns.ledger(after.id)] == ["ADD", "UPDATE"]


async def test_a_lesson_restated_word_for_word_in_three_sessions_is_a_pattern(
    rv: reverie.Reverie,
) -> None:
    ns = rv.namespace("a")
    text = "Actually, the CI runners need 8 GB of memory, not 4 GB."
    for i in range(3):
        await said(rv, ns, f"s{i}", text)
    [correction] = await ns.query("kind:correction")
    [pattern] = await ns.patterns()
    assert pattern.examples == (correction.id,) and pattern.sessions == 3


async def test_lessons_learnt_by_hand_count_one_occasion_each(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    lessons = (
        "Flaky integration tests usually mean the fixture database was not reset.",
        "When integration tests are flaky, reset the fixture database first.",
    )
    for lesson in lessons:
        ok(await ns.learn(lesson, "lesson"), "ADD")
    async with ns.session("end"):
        pass
    await rv.wait_idle()
    assert await ns.patterns() == []
    ok(
        await ns.learn(
            "Reset the fixture database before blaming flaky integration tests.", "lesson"
        ),
        "ADD",
    )
    async with ns.session("end-2"):
        pass
    await rv.wait_idle()
    [pattern] = await ns.patterns()
    assert len(pattern.examples) == 3 and pattern.trigger.startswith("lessons about")


@pytest.mark.parametrize("config", [Config(records=RecordsConfig(pattern_sessions=4))])
async def test_the_session_count_a_pattern_needs_is_configured(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    for i, text in enumerate(BLUE):
        await said(rv, ns, f"s{i}", text)
    assert await ns.patterns() == []


# ---- the record files ------------------------------------------------------------------------


async def test_a_session_end_writes_the_index_and_the_hot_session_log_in_both_formats(
    rv: reverie.Reverie, tmp_path: Path
) -> None:
    ns = rv.namespace("a")
    async with ns.session("s1") as s:
        ok(
            await s.call_tool(
                "topic",
                {"action": "save", "topic": "deploy", "content": "The deploy timeout is 45s"},
            ),
            "ADD",
        )
        await s.turn(user=BLUE[0], assistant="Noted.")
    await rv.wait_idle()
    written = files(tmp_path / "home", "a")
    records = await ns.query("sort:created:asc")
    index = [json.loads(line) for line in written["memory/index.jsonl"].splitlines()]
    assert [i["id"] for i in index] == [r.id for r in records]
    assert set(index[0]) == {
        "id",
        "kind",
        "tier",
        "priority",
        "status",
        "access_count",
        "updated_at",
    }
    [log_md] = [k for k in written if k.startswith("memory/hot/session-") and k.endswith(".md")]
    jsonl = json.loads(written[log_md.removesuffix(".md") + ".jsonl"].splitlines()[0])
    assert jsonl["session_id"] == "s1" and jsonl["tier"] == "hot"
    assert all(f"## ID: {r.id}" in written[log_md] for r in records)
    assert "- **Priority**:" in written[log_md] and "### Access history" in written[log_md]
    [correction] = [r for r in records if r.kind == "correction"]
    assert f"## ID: {correction.id}" in written["memory/hot/corrections.md"]
    assert correction.id not in written["memory/hot/errors.md"]


async def test_records_leaving_hot_leave_the_session_log_for_the_warm_jsonl(
    rv: reverie.Reverie, tmp_path: Path
) -> None:
    ns = rv.namespace("a")
    ok(await ns.learn("Always pin the base image digest", "lesson"), "ADD")
    for i in range(3):  # hot_sessions: three sessions end unreferenced
        async with ns.session(f"e{i}"):
            pass
    await rv.wait_idle()
    written = files(tmp_path / "home", "a")
    assert not any(k.startswith("memory/hot/manual") for k in written)
    [warm] = [json.loads(line) for line in written["memory/warm/learnings.jsonl"].splitlines()]
    assert (warm["content"], warm["tier"]) == ("Always pin the base image digest", "warm")
    assert written["memory/cold/archive.jsonl"] == ""


async def test_reindex_makes_the_search_rows_and_the_files_again(
    rv: reverie.Reverie, tmp_path: Path
) -> None:
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        ok(
            await s.call_tool(
                "topic",
                {"action": "save", "topic": "deploy", "content": "The deploy timeout is 45s"},
            ),
            "ADD",
        )
    ok(await ns.learn("Blue-green deploys need a drained queue", "lesson"), "ADD")
    await rv.wait_idle()
    home = tmp_path / "home"
    with write_db(home) as conn:
        conn.execute("DELETE FROM search_index WHERE namespace = 'a'")
        conn.execute("DELETE FROM learning_text WHERE namespace = 'a'")
    (home / "a" / "memory" / "index.jsonl").unlink()
    assert list(await ns.search("deploy timeout")) == []
    assert await ns.query('"drained queue"') == []
    done = await ns.reindex()
    assert done["search_rows"] == 2 and "memory/index.jsonl" in done["files"]
    assert [h.text for h in await ns.search("deploy timeout")][:1] == ["The deploy timeout is 45s"]
    assert [r.kind for r in await ns.query('"drained queue"')] == ["lesson"]
    assert (home / "a" / "memory" / "index.jsonl").read_text().count("\n") == 2


async def test_a_new_pattern_in_a_long_lived_namespace_stays_warm(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    for i in range(11):
        async with ns.session(f"quiet-{i}"):
            pass
    for i, text in enumerate(BLUE):
        await said(rv, ns, f"s{i}", text)
    [pattern] = await ns.patterns()
    async with ns.session("one-more"):
        pass
    await rv.wait_idle()
    assert (await ns.record(pattern.id)).tier == "warm"  # type: ignore[union-attr]


async def test_extending_a_pattern_keeps_every_example_it_had(
    rv: reverie.Reverie, tmp_path: Path
) -> None:
    """Examples older than the sightings compared (the newest 500) are kept, not dropped."""
    ns = rv.namespace("a")
    for i, text in enumerate(BLUE):
        await said(rv, ns, f"s{i}", text)
    [before] = await ns.patterns()
    with write_db(tmp_path / "home") as conn:  # an example from long ago, out of the window
        conn.execute(
            "UPDATE patterns SET examples = ?, sessions = 7 WHERE id = ?",
            (json.dumps(["lrn-long-ago", *before.examples]), before.id),
        )
    ok(
        await ns.learn("The blue cluster is where staging deploys go, never green.", "correction"),
        "ADD",
    )
    await said(rv, ns, "s4", "Thanks.")
    [after] = await ns.patterns()
    assert after.examples[: len(before.examples) + 1] == ("lrn-long-ago", *before.examples)
    assert len(after.examples) == len(before.examples) + 2 and after.sessions == 7


def test_a_group_cannot_drift_from_one_lesson_to_the_next() -> None:
    """Each statement shares two words with the one before, none with those three back:
    linked pairwise they were one group of six; joined by a group's core, the first four
    are one lesson and the last two (seen in two sessions only) are none."""
    said = [
        "red green blue",
        "green blue cyan",
        "blue cyan magenta",
        "cyan magenta yellow",
        "magenta yellow black",
        "yellow black white",
    ]
    seen = [
        Sighting(f"x{i}", "insight", text, "medium", f"2026-01-0{i + 1}", frozenset({f"s{i}"}))
        for i, text in enumerate(said)
    ]
    [group] = groups(seen, SETTINGS)
    assert [m.content for m in group] == said[:4]
