"""``reverie skill consolidate | trim | unmerge | untrim`` as real subprocesses."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import reverie
from tests.test_cli import cli, jcli
from tests.test_skill_consolidate import PROD, REPEATED, STAGING

pytestmark = pytest.mark.slow


def seed(home: Path) -> None:
    async def main() -> None:
        async with reverie.open(home) as rv:
            async with rv.namespace("default").session("s") as s:
                for name, body in (("deploy-prod", PROD), ("deploy-staging", STAGING)):
                    await s.call_tool(
                        "skill_manage", {"action": "create", "name": name, "content": body}
                    )
                await s.call_tool(
                    "skill_manage", {"action": "create", "name": "backup", "content": REPEATED}
                )

    asyncio.run(main())


def test_consolidate_apply_and_unmerge(tmp_path: Path) -> None:
    seed(tmp_path)
    dry = jcli(tmp_path, "skill", "consolidate")
    assert [p["names"] for p in dry["proposals"]] == [["deploy-prod", "deploy-staging"]]
    assert "deploy-prod" in cli(tmp_path, "skill", "consolidate", "--show")
    applied = jcli(tmp_path, "skill", "consolidate", "--apply")
    assert applied["applied"] == ["deploy-prod"]
    names = [s["name"] for s in jcli(tmp_path, "skill", "list")]
    assert "deploy-staging" not in names
    back = jcli(tmp_path, "skill", "unmerge", "deploy-prod")
    assert back["decision"] == "RESTORED" and back["restored"][0]["name"] == "deploy-staging"
    assert jcli(tmp_path, "skill", "unmerge", "deploy-prod", code=1)["decision"] == "ERROR"
    assert "no merge to undo" in jcli(tmp_path, "skill", "unmerge", "ghost", code=1)["error"]


def test_trim_apply_and_untrim(tmp_path: Path) -> None:
    seed(tmp_path)
    [proposal] = jcli(tmp_path, "skill", "trim")["proposals"]
    assert proposal["names"] == ["backup"]
    assert jcli(tmp_path, "skill", "trim", "--apply")["applied"] == ["backup"]
    assert jcli(tmp_path, "skill", "untrim", "backup")["decision"] == "RESTORED"
    assert jcli(tmp_path, "skill", "untrim", "backup", code=1)["decision"] == "ERROR"
