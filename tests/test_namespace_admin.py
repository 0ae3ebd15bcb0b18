"""Namespace management (issue 11): create, list, show, archive and restore, each namespace
with its own caps and tier numbers; archive is reversible, deletes nothing and refuses
writes; every change is audited."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import reverie
from reverie import ManualClock, NamespaceArchived
from reverie.actors.reviewer import ARCHIVED
from reverie.errors import InputError
from tests.conftest import both_backends, ok

pytestmark = both_backends


def add(content: str, target: str = "memory") -> dict[str, Any]:
    return {"action": "add", "target": target, "content": content}


def save(content: str, topic: str = "deploy") -> dict[str, Any]:
    return {"action": "save", "topic": topic, "content": content}


async def fact(ns: reverie.Namespace, content: str) -> str:
    async with ns.session("writing") as s:
        result = ok(await s.call_tool("topic", save(content)), "ADD")
    return str(result["entry_id"])


async def sessions(rv: reverie.Reverie, ns: reverie.Namespace, n: int) -> None:
    for i in range(n):
        async with ns.session(f"empty-{i}"):
            pass
    await rv.wait_idle()


async def tier(ns: reverie.Namespace, record_id: str) -> str:
    record = await ns.record(record_id)
    assert record is not None
    return record.tier


async def everything(ns: reverie.Namespace) -> dict[str, Any]:
    """What the namespace holds, to compare before and after an archive."""
    return {
        "entries": await ns.entries("memory"),
        "facts": await ns.facts("deploy"),
        "episodes": await ns.episodes(),
        "records": await ns.query("sort:created limit:1000"),
        "ledger": [r for r in await ns.ledger() if r.actor != "namespace"],
        "status": await ns.status(),
    }


# ---- create, list, show -------------------------------------------------------------------


async def test_create_list_and_show(rv: reverie.Reverie) -> None:
    made = await rv.create_namespace("proj", {"caps.memory": 500, "records.hot_sessions": 5})
    assert made["namespace"] == "proj" and not made["archived"] and made["created_at"]
    assert made["settings"] == {
        "caps.memory": {"value": 500, "home": 3000},
        "records.hot_sessions": {"value": 5, "home": 3},
    }
    assert made["records"]["tier"] == {} and made["sessions"] == 0
    await rv.create_namespace("empty")
    assert await rv.namespaces() == ["empty", "proj"]  # created, though they hold nothing
    with pytest.raises(InputError, match="exists already"):
        await rv.create_namespace("proj")
    with pytest.raises(InputError):
        await rv.create_namespace("../escape")
    await fact(rv.namespace("proj"), "The deploy timeout is 30s")
    await rv.wait_idle()
    shown = await rv.namespace_info("proj")
    assert shown["records"]["tier"] == {"hot": 1} and shown["sessions"] == 1
    with pytest.raises(InputError, match="no namespace"):
        await rv.namespace_info("nobody")


async def test_a_namespace_that_holds_data_can_be_managed_without_being_created(
    rv: reverie.Reverie,
) -> None:
    ns = rv.namespace("old")
    async with ns.session("s") as s:
        ok(await s.call_tool("memory", add("Builds run with make ci")), "ADD")
    await rv.wait_idle()
    with pytest.raises(InputError, match="exists already"):
        await rv.create_namespace("old")
    await rv.archive_namespace("old")
    assert (await rv.namespace_info("old"))["archived"]
    with pytest.raises(InputError, match="no namespace"):
        await rv.archive_namespace("never-seen")


# ---- archive and restore ------------------------------------------------------------------


async def test_archive_refuses_writes_keeps_data_and_restore_allows_them_again(
    rv: reverie.Reverie,
) -> None:
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        ok(await s.call_tool("memory", add("Builds run with make ci")), "ADD")
        ok(await s.call_tool("topic", save("The deploy timeout is 30s")), "ADD")
        await s.turn(user="we deploy on fridays", assistant="noted")
        await s.turn(user="The staging database is called kestrel-db from now on")
    ok(await ns.learn("Check the disk quota before a deploy"), "ADD")
    await rv.wait_idle()  # the turns are extracted; no idle yet, so no flush
    before = await everything(ns)

    archived = await rv.archive_namespace("a")
    assert archived["archived"] and archived["archived_at"]
    async with ns.session("t") as s:  # a session may open: it reads
        refused = ok(await s.call_tool("memory", add("A new rule")), "ERROR")
        assert "archived" in refused["error"]
        assert "archived" in ok(await s.call_tool("topic", save("Timeout 45s")), "ERROR")["error"]
        with pytest.raises(NamespaceArchived):
            await s.turn(user="this turn is refused")
        await s.idle()  # the flush waits: nothing is read, routed or marked
    with pytest.raises(NamespaceArchived, match="restore it first"):
        await ns.learn("A lesson nobody keeps")
    with pytest.raises(NamespaceArchived):
        await ns.set_tier(before["records"][0].id, "cold")
    with pytest.raises(NamespaceArchived):
        await ns.restore(before["entries"][0].id)
    with pytest.raises(NamespaceArchived):
        await ns.curate(apply=True)
    with pytest.raises(NamespaceArchived):
        await ns.restore_skill("release")
    assert (await ns.curate())["dry_run"]  # a dry run only reads
    # still readable: search, reads, the ledger (the export's sources)
    assert [h.text for h in await ns.search("make ci")] == ["Builds run with make ci"]
    await rv.wait_idle()
    assert await everything(ns) == before  # nothing written, nothing deleted, no tier moved
    assert "a" not in await rv.namespaces()
    assert "a" in await rv.namespaces(include_archived=True)

    assert not (await rv.restore_namespace("a"))["archived"]
    assert await everything(ns) == before
    async with ns.session("u") as s:
        ok(await s.call_tool("memory", add("A new rule")), "ADD")
        await s.turn(user="this turn is kept")
        await s.idle()
    await rv.wait_idle()
    flushed = [r for r in await ns.ledger() if r.actor == "flusher" and r.action == "flush"]
    assert flushed and flushed[0].detail["candidates"] >= 1  # what waited is flushed now
    ok(await ns.learn("A lesson kept"), "ADD")
    assert "a" in await rv.namespaces()


async def test_archive_and_restore_refuse_the_wrong_state(rv: reverie.Reverie) -> None:
    await rv.create_namespace("a")
    with pytest.raises(InputError, match="not archived"):
        await rv.restore_namespace("a")
    await rv.archive_namespace("a")
    with pytest.raises(InputError, match="archived already"):
        await rv.archive_namespace("a")


async def test_an_archived_namespace_keeps_its_tier_clock_still(rv: reverie.Reverie) -> None:
    """Sessions of an archived namespace move no tier and count no session."""
    ns = rv.namespace("a")
    fid = await fact(ns, "The deploy timeout is 30s")
    await rv.wait_idle()  # its session's end is counted before the archive
    await rv.archive_namespace("a")
    await sessions(rv, ns, 4)
    assert await tier(ns, fid) == "hot"
    assert (await rv.namespace_info("a"))["sessions"] == 1
    await rv.restore_namespace("a")
    await sessions(rv, ns, 2)
    assert await tier(ns, fid) == "warm"


async def test_reads_of_an_archived_namespace_are_not_counted_at_close(tmp_path: Path) -> None:
    async with reverie.open(tmp_path) as rv:
        ns = rv.namespace("a")
        fid = await fact(ns, "The deploy timeout is 30s")
        await rv.wait_idle()
        await rv.archive_namespace("a")
        for _ in range(3):
            await ns.search("deploy timeout")
    async with reverie.open(tmp_path) as rv:
        record = await rv.namespace("a").record(fid)
        assert record is not None and (record.access_count, record.tier) == (0, "hot")


async def test_review_skips_an_archived_namespace(rv: reverie.Reverie) -> None:
    for name in ("kept", "shelved"):
        async with rv.namespace(name).session("s") as s:
            ok(await s.call_tool("topic", save("The deploy timeout is 30s")), "ADD")
    await rv.wait_idle()
    await rv.archive_namespace("shelved")
    round_ = await rv.review(force=True)
    by_name = {n["namespace"]: n for n in round_["namespaces"]}
    assert by_name["shelved"]["ran"] is False and by_name["shelved"]["reason"] == ARCHIVED
    assert by_name["kept"]["ran"] is True
    single = await rv.namespace("shelved").review(force=True)
    assert single["ran"] is False and single["reason"] == ARCHIVED


# ---- per-namespace settings -----------------------------------------------------------------


async def test_a_cap_override_changes_what_the_writer_accepts(rv: reverie.Reverie) -> None:
    line = "Builds run with make ci on every push to main"  # 46 chars
    second = "Deploys need a green staging run first"
    await rv.create_namespace("small", {"caps.memory": 80})
    small, plain = rv.namespace("small"), rv.namespace("plain")
    async with small.session("s") as s, plain.session("s") as p:
        ok(await s.call_tool("memory", add(line)), "ADD")
        full = ok(await s.call_tool("memory", add(second)), "ERROR")
        assert "/80 chars" in full["error"]
        ok(await p.call_tool("memory", add(line)), "ADD")
        ok(await p.call_tool("memory", add(second)), "ADD")
        # the running runtime: the next write reads the new setting
        await rv.set_namespace_settings("small", {"caps.memory": 3000})
        ok(await s.call_tool("memory", add(second)), "ADD")
    await rv.set_namespace_settings("small", {"caps.memory": 60})
    snapshot = (await small.snapshot()).text  # the snapshot fits the namespace's own cap
    assert "/60 chars)" in snapshot and "(1 older entries over the cap" in snapshot


async def test_a_tier_override_changes_when_a_record_moves(rv: reverie.Reverie) -> None:
    await rv.create_namespace("quick", {"records.hot_sessions": 1})
    quick, plain = rv.namespace("quick"), rv.namespace("plain")
    fast = await fact(quick, "The deploy timeout is 30s")  # its own session ended: 1
    slow = await fact(plain, "The deploy timeout is 30s")
    await rv.wait_idle()
    assert await tier(quick, fast) == "warm"
    assert await tier(plain, slow) == "hot"
    # set while running: the learner reads it at its next session end
    await rv.set_namespace_settings("plain", {"records.hot_sessions": 2})
    await sessions(rv, plain, 1)
    assert await tier(plain, slow) == "warm"


async def test_a_longterm_override_moves_by_the_clock(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    await rv.create_namespace("brief", {"records.longterm_days": 2})
    brief, plain = rv.namespace("brief"), rv.namespace("plain")
    short = await fact(brief, "The deploy timeout is 30s")
    long_ = await fact(plain, "The deploy timeout is 30s")
    clock.advance(timedelta(days=3))
    await sessions(rv, brief, 1)
    await sessions(rv, plain, 1)
    assert await tier(brief, short) == "cold"
    assert await tier(plain, long_) == "hot"


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"writer.max_topics": 3}, "writer.max_topics"),  # not overridable
        ({"caps.bogus": 3}, "caps.bogus"),
        ({"caps.memory": "3000"}, "caps.memory"),  # a string, as from a careless host
        ({"caps.memory": -1}, "caps.memory"),
        ({"caps.memory": 0}, "caps.memory"),
        ({"records.hot_sessions": True}, "records.hot_sessions"),
        ({"records.hot_sessions": 1.5}, "records.hot_sessions"),
        ({"records.longterm_days": float("nan")}, "records.longterm_days"),
        ({"records.longterm_days": float("inf")}, "records.longterm_days"),
        ({"records.longterm_days": 1e12}, "records.longterm_days"),  # times would overflow
        ({"records.heartbeat_interval_minutes": 1e12}, "records.heartbeat_interval_minutes"),
    ],
)
async def test_invalid_overrides_are_refused_and_nothing_is_written(
    rv: reverie.Reverie, settings: dict[str, Any], named: str
) -> None:
    with pytest.raises(InputError, match=named.replace(".", r"\.")):
        await rv.create_namespace("a", settings)
    assert await rv.namespaces(include_archived=True) == []
    assert await rv.namespace("a").ledger() == []
    await rv.create_namespace("a", {"caps.memory": 500})
    with pytest.raises(InputError, match=named.replace(".", r"\.")):
        await rv.set_namespace_settings("a", settings)
    shown = await rv.namespace_info("a")
    assert shown["settings"] == {"caps.memory": {"value": 500, "home": 3000}}
    assert [r.decision for r in await rv.namespace("a").ledger()] == ["CREATE"]


async def test_a_none_setting_removes_the_override(rv: reverie.Reverie) -> None:
    await rv.create_namespace("a", {"caps.memory": 500, "caps.user": 400})
    shown = await rv.set_namespace_settings("a", {"caps.memory": None, "caps.soul": 900})
    assert set(shown["settings"]) == {"caps.user", "caps.soul"}
    with pytest.raises(InputError, match="caps.bogus"):
        await rv.set_namespace_settings("a", {"caps.bogus": None})
    with pytest.raises(InputError, match="caps.memory"):
        await rv.create_namespace("b", {"caps.memory": None})
    assert len(await rv.namespace("a").ledger()) == 2


async def test_every_change_is_a_ledger_row(rv: reverie.Reverie) -> None:
    await rv.create_namespace("a", {"caps.memory": 500})
    await rv.set_namespace_settings("a", {"caps.memory": 600})
    await rv.archive_namespace("a")
    await rv.restore_namespace("a")
    rows = [r for r in await rv.namespace("a").ledger() if r.actor == "namespace"]
    assert [r.decision for r in rows] == ["CREATE", "SETTINGS", "ARCHIVE", "RESTORE"]
    assert rows[0].after == {"settings": {"caps.memory": 500}}
    assert rows[1].before == {"settings": {"caps.memory": 500}}
    assert rows[1].after == {"settings": {"caps.memory": 600}}
    assert rows[2].after == {"archived_at": rows[2].ts}
    assert rows[3].before == {"archived_at": rows[2].ts} and rows[3].after == {"archived_at": None}


# ---- the command ----------------------------------------------------------------------------


def cli(home: Path, *args: str, code: int = 0) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "reverie", *args, "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    return proc.stdout + proc.stderr


def jcli(home: Path, *args: str, code: int = 0) -> Any:
    return json.loads(cli(home, *args, "--json", code=code))


@pytest.mark.slow
def test_cli_round_trip(tmp_path: Path) -> None:
    home = tmp_path / "home"
    made = jcli(home, "namespace", "create", "proj", "--set", "caps.memory=500")
    assert made["settings"] == {"caps.memory": {"value": 500, "home": 3000}}
    assert "caps.bogus" in cli(home, "namespace", "set", "proj", "caps.bogus=1", code=2)
    assert "not a valid int" in cli(home, "namespace", "set", "proj", "caps.memory=lots", code=2)
    shown = jcli(home, "namespace", "set", "proj", "records.hot_sessions=5", "caps.memory=")
    assert shown["settings"] == {"records.hot_sessions": {"value": 5, "home": 3}}
    assert jcli(home, "learn", "Check the quota first", "--namespace", "proj")["decision"] == "ADD"
    assert jcli(home, "namespace", "archive", "proj")["archived"] is True
    assert "archived" in cli(home, "learn", "Refused", "--namespace", "proj", code=2)
    assert jcli(home, "namespace", "list") == []
    [listed] = jcli(home, "namespace", "list", "--all")
    assert listed["namespace"] == "proj" and listed["archived"] is True
    assert len(jcli(home, "query", "--namespace", "proj")) == 1  # still readable
    assert jcli(home, "namespace", "show", "proj")["records"]["tier"] == {"hot": 1}
    assert jcli(home, "namespace", "restore", "proj")["archived"] is False
    assert jcli(home, "learn", "Kept now", "--namespace", "proj")["decision"] == "ADD"
    assert "no namespace" in cli(home, "namespace", "show", "nobody", code=2)
