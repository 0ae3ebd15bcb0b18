"""Stored rule outputs follow the rules: a home keyed under older rules is re-keyed on open
(crash-safe, idempotent, counted), and a home at the current version is left alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from structlog.testing import capture_logs

import reverie
from reverie import ManualClock
from reverie.rules import supersede
from reverie.stores import rekey, topics
from reverie.stores.rekey import HOME, PROGRESS_KEY, VERSION_KEY
from tests.conftest import ok, write_db
from tests.test_cli import jcli

OLD = '"0.000000000000"'  # a version no reverie ever had, as review_state stores it (JSON)


async def save(home: Path, clock: ManualClock, *contents: str, topic: str = "deploy") -> str:
    async with reverie.open(home, clock=clock) as rv, rv.namespace().session("s") as s:
        decisions = [
            (await s.call_tool("topic", {"action": "save", "topic": topic, "content": c}))[
                "decision"
            ]
            for c in contents
        ]
    return decisions[-1]


def age(home: Path, version: str = OLD) -> None:
    """What an older reverie would have left: its own keys and its version."""
    with write_db(home) as conn:
        conn.execute("UPDATE facts SET subject_key = 'deploy timeout old', skeleton_key = NULL")
        conn.execute(
            "UPDATE review_state SET value = ? WHERE namespace = ? AND key = ?",
            (version, HOME, VERSION_KEY),
        )


def subject_keys(home: Path) -> list[str]:
    with write_db(home) as conn:
        return [r[0] for r in conn.execute("SELECT subject_key FROM facts ORDER BY rowid")]


async def test_a_home_keyed_by_older_rules_is_rekeyed_so_a_correction_supersedes(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Invariant: a correction supersedes whatever rules version wrote the old fact."""
    home = tmp_path / "home"
    assert await save(home, clock, "The deploy timeout is 30s") == "ADD"
    age(home)
    assert subject_keys(home) == ["deploy timeout old"]
    with capture_logs() as logs:
        async with reverie.open(home, clock=clock) as rv:
            record = await rv.rekeyed()
            assert subject_keys(home) == ["deploy timeout"]
            async with rv.namespace().session("s2") as s:
                ok(
                    await s.call_tool(
                        "topic",
                        {
                            "action": "save",
                            "topic": "deploy",
                            "content": "The deploy timeout is 45s",
                        },
                    ),
                    "SUPERSEDE",
                )
    assert record is not None and (record.facts, record.entries) == (1, 0)
    assert record.version == rekey.current_version() and record.previous == OLD.strip('"')
    assert record.describe().startswith("rekeyed 1 facts / 0 entries under rules v")
    [event] = [e for e in logs if e["event"] == "rules_rekeyed"]
    assert event["facts"] == 1 and event["version"] == rekey.current_version()


async def test_without_the_rekey_the_subject_index_misses_the_fact(
    tmp_path: Path, clock: ManualClock
) -> None:
    """The failure the re-keying prevents: keys from older rules under the current version
    hide a fact from the subject index that routing and time order read."""
    home = tmp_path / "home"
    await save(home, clock, "The deploy timeout is 30s")
    age(home, version=f'"{rekey.current_version()}"')  # stale keys, but marked current
    subject = supersede.keys("The deploy timeout is 45s").subject
    assert subject is not None
    async with reverie.open(home, clock=clock) as rv:
        assert await rv.rekeyed() is None
    with write_db(home) as conn:
        assert topics.topics_of_subjects(conn, "default", [subject]) == {}
    age(home)
    async with reverie.open(home, clock=clock) as rv:
        assert await rv.rekeyed() is not None
    with write_db(home) as conn:
        assert topics.topics_of_subjects(conn, "default", [subject]) == {subject: "deploy"}


async def test_a_home_at_the_current_version_is_not_rekeyed(
    tmp_path: Path, clock: ManualClock
) -> None:
    home = tmp_path / "home"
    async with reverie.open(home, clock=clock) as rv:
        assert await rv.rekeyed() is None  # an empty home: its version is recorded, no report
    await save(home, clock, "The deploy timeout is 30s", "Postgres 15 on port 5432")
    with capture_logs() as logs:
        async with reverie.open(home, clock=clock) as rv:
            assert await rv.rekeyed() is None
    assert not [e for e in logs if e["event"] == "rules_rekeyed"]
    with write_db(home) as conn:
        [(stored,)] = conn.execute(
            "SELECT value FROM review_state WHERE namespace = ? AND key = ?", (HOME, VERSION_KEY)
        ).fetchall()
    assert stored == f'"{rekey.current_version()}"'


async def test_entries_are_rekeyed_and_a_second_run_changes_nothing(
    tmp_path: Path, clock: ManualClock
) -> None:
    home = tmp_path / "home"
    async with reverie.open(home, clock=clock) as rv, rv.namespace().session("s") as s:
        for target, content in (("user_settings", "timezone: Europe/Oslo"), ("memory", "Use uv")):
            args = {"action": "add", "target": target, "content": content}
            ok(await s.call_tool("memory", args), "ADD")
    with write_db(home) as conn:
        conn.execute("UPDATE entries SET key = 'tz', norm = upper(norm)")
    age(home)
    async with reverie.open(home, clock=clock) as rv:
        record = await rv.rekeyed()
        s = rv.namespace().session("s2")
        async with s:  # the setting's key is back: a new value replaces the old one in place
            ok(
                await s.call_tool(
                    "memory",
                    {"action": "add", "target": "user_settings", "content": "timezone: UTC"},
                ),
                "REPLACED",
            )
    assert record is not None and (record.facts, record.entries, record.checked) == (0, 2, 2)
    with write_db(home) as conn:  # a second run over current keys writes nothing
        assert rekey.step(conn, "next", "2026-01-02T00:00:00Z") is False  # facts pass
        assert rekey.step(conn, "next", "2026-01-02T00:00:00Z") is True
        again = rekey.last(conn)
    assert again is not None and (again.facts, again.entries, again.checked) == (0, 0, 3)


async def test_a_rekey_cut_short_resumes_where_its_last_batch_committed(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Invariant: progress commits with its batch and the version is written last."""
    home = tmp_path / "home"
    facts = [f"Server {i} listens on port {8000 + i}" for i in range(5)]
    await save(home, clock, *facts, topic="servers")
    with write_db(home) as conn:
        conn.execute("UPDATE facts SET norm = 'stale', skeleton_key = 'stale'")
    age(home)
    with write_db(home) as conn:  # a first process re-keys two batches of two, then is killed
        version = rekey.current_version()
        assert not rekey.step(conn, version, "t", size=2)
        assert not rekey.step(conn, version, "t", size=2)
        assert rekey.stored_version(conn) == OLD.strip('"')
        assert rekey.last(conn) is None
        halfway = [r[0] for r in conn.execute("SELECT norm FROM facts ORDER BY rowid")]
    assert halfway.count("stale") == 1
    async with reverie.open(home, clock=clock) as rv:
        record = await rv.rekeyed()
    assert record is not None and (record.facts, record.entries, record.checked) == (5, 0, 5)
    with write_db(home) as conn:
        assert "stale" not in {r[0] for r in conn.execute("SELECT norm FROM facts")}
        assert not conn.execute(
            "SELECT 1 FROM review_state WHERE key = ?", (PROGRESS_KEY,)
        ).fetchall()


def test_the_fingerprint_follows_what_the_rules_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    before = rekey.fingerprint()
    assert rekey.fingerprint() == before  # deterministic
    real = supersede.keys

    def changed(text: str) -> supersede.Keys:
        k = real(text)
        if text == rekey.PROBES[0]:
            return supersede.Keys(k.subject, k.role, "a new skeleton", k.negated)
        return k

    monkeypatch.setattr(supersede, "keys", changed)
    assert rekey.fingerprint() != before


@pytest.mark.slow
def test_show_reports_the_last_rekey(tmp_path: Path) -> None:
    jcli(tmp_path, "topic", "save", "deploy", "The deploy timeout is 30s")
    assert jcli(tmp_path, "show")["rekeyed"] is None
    age(tmp_path)
    shown = jcli(tmp_path, "show")["rekeyed"]
    assert (shown["facts"], shown["entries"], shown["version"]) == (
        1,
        0,
        rekey.current_version(),
    )
