"""``reverie review``, ``reverie curator`` and ``reverie skill`` as real subprocesses."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import reverie
from tests.test_cli import cli, jcli

pytestmark = pytest.mark.slow


def seed(home: Path) -> None:
    async def main() -> None:
        async with reverie.open(home) as rv:
            async with rv.namespace("default").session("s") as s:
                await s.turn(user="The deploy timeout is 30s.")
                await s.turn(user="The deploys broke when the proxy cache was cold.")
                for name in ("one-off", "keeper"):
                    await s.call_tool(
                        "skill_manage",
                        {
                            "action": "create",
                            "name": name,
                            "content": f"# {name}\nDo the {name} thing.",
                        },
                    )
                await s.pre_compact()

    asyncio.run(main())


def test_review_prints_the_pass_and_its_model_calls(tmp_path: Path) -> None:
    seed(tmp_path)
    report = jcli(tmp_path, "review")
    [ns] = report["namespaces"]
    assert [s["stage"] for s in ns["stages"]] == [
        "linter",
        "distiller",
        "promoter",
        "curator",
        "profiler",
        "dreamer",
    ]
    assert report["model_calls"]["flusher"]["calls"] == 1
    again = jcli(tmp_path, "review")
    assert not again["namespaces"][0]["ran"]
    assert again["namespaces"][0]["reason"] == "nothing new since the last pass"
    forced = cli(tmp_path, "review", "--force")  # force lifts the cooldown; nothing new
    assert "default: no pass — nothing new since the last pass" in forced
    assert (tmp_path / "default" / "topics" / "deploy" / "summary.md").exists()


def test_curator_dry_run_apply_restore_and_pin(tmp_path: Path) -> None:
    seed(tmp_path)
    env = {"REVERIE_CURATOR_IDLE_DAYS": "0"}
    assert jcli(tmp_path, "skill", "pin", "keeper")["decision"] == "PATCHED"
    listed = {s["name"]: s["pinned"] for s in jcli(tmp_path, "skill", "list")}
    assert listed == {"keeper": True, "one-off": False}
    dry = cli(tmp_path, "curator", "--json", env=env)
    assert '"one-off"' in dry and '"keeper"' not in dry
    assert (tmp_path / "default" / "skills" / "one-off" / "SKILL.md").exists()
    applied = cli(tmp_path, "curator", "--apply", env=env)
    assert "archived one-off → skills/.archive/one-off__" in applied
    assert not (tmp_path / "default" / "skills" / "one-off").exists()
    assert [s["name"] for s in jcli(tmp_path, "skill", "list")] == ["keeper"]
    assert jcli(tmp_path, "curator", "--restore", "one-off")["decision"] == "RESTORED"
    assert (tmp_path / "default" / "skills" / "one-off" / "SKILL.md").exists()
    assert jcli(tmp_path, "curator", "--restore", "one-off", code=1)["decision"] == "ERROR"
    assert jcli(tmp_path, "skill", "use", "one-off")["decision"] == "PATCHED"
    assert jcli(tmp_path, "skill", "pin", "missing", code=1)["decision"] == "ERROR"
    cli(tmp_path, "curator", "--apply", "--restore", "x", code=2)
