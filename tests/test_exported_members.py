import reverie


def test_all_is_sorted_and_complete() -> None:
    public = {name for name in dir(reverie) if not name.startswith("_")}
    modules = {
        "actors",
        "architecture",
        "bus",
        "cli",
        "commands",
        "clock",
        "config",
        "dream",
        "embedding",
        "errors",
        "frozen",
        "model",
        "names",
        "prefetch",
        "results",
        "reports",
        "rules",
        "runtime",
        "seams",
        "simulation",
        "skills",
        "snapshot",
        "stores",
        "task_home",
        "telemetry",
        "tools",
        "transfer",
        "version",
    }
    assert sorted(reverie.__all__) == reverie.__all__
    assert set(reverie.__all__) - {"__version__"} == public - modules


def test_contract_names_exist() -> None:
    for name in ("open", "ManualClock", "SystemClock", "Reverie", "Namespace", "Session"):
        assert hasattr(reverie, name)
    for method in ("namespace", "review", "wait_idle"):
        assert callable(getattr(reverie.Reverie, method))
    for method in ("session", "search", "chain", "ledger"):
        assert callable(getattr(reverie.Namespace, method))
    for method in ("call_tool", "turn", "idle", "pre_compact"):
        assert callable(getattr(reverie.Session, method))
