from pathlib import Path

import pytest

from reverie import Config, ConfigError


def test_defaults_are_the_design_numbers() -> None:
    c = Config()
    assert (c.caps.memory, c.caps.user) == (3000, 2000)
    assert c.writer.max_topics == 10
    assert (c.flusher.max_memory_adds, c.flusher.max_topic_saves) == (2, 5)
    d = c.distiller
    assert (d.max_topics, d.summary_chars, d.interval_h) == (5, 1000, 24)
    assert (c.linter.interval_h, c.linter.breaker_s) == (168, 180)
    p = c.promoter
    assert (p.min_chain_depth, p.min_age_h, p.max_candidates, p.max_writes) == (2, 72, 8, 2)
    assert (p.rewrite_chars, p.decided_fifo, p.promotion_enabled) == (220, 400, True)
    assert c.curator.idle_days == 90
    assert c.reviewer.cooldown_h == 6
    assert c.extractor.min_chars == 20


def test_config_is_frozen() -> None:
    with pytest.raises(AttributeError):
        Config().caps.memory = 5  # type: ignore[misc]


def test_toml_then_environment(tmp_path: Path) -> None:
    path = tmp_path / "reverie.toml"
    path.write_text("[caps]\nmemory = 1200\n[writer]\njaccard_threshold = 0.7\n")
    c = Config.load(
        path,
        {
            "REVERIE_CAPS_MEMORY": "900",
            "REVERIE_MODEL_URL": "http://x",
            "REVERIE_HOME": "/ignored",
            "PATH": "/bin",
        },
    )
    assert c.caps.memory == 900
    assert c.writer.jaccard_threshold == 0.7
    assert c.model.url == "http://x"


@pytest.mark.parametrize(
    ("toml", "environ", "message"),
    [
        ("[nope]\nx = 1\n", {}, "unknown config section"),
        ("[caps]\nmemroy = 1\n", {}, "unknown config key caps.memroy"),
        ("[caps]\nmemory = 'big'\n", {}, "caps.memory must be int"),
        ("[caps]\nmemory = -1\n", {}, "must not be negative"),
        ("[writer]\njaccard_threshold = 2.0\n", {}, "jaccard_threshold"),
        ("caps = 3\n", {}, "must be a table"),
        ("[caps\n", {}, "not valid TOML"),
        ("", {"REVERIE_CAPS_MEMORY": "lots"}, "REVERIE_CAPS_MEMORY='lots'"),
        ("", {"REVERIE_WRITER_ENABLED": "perhaps"}, "REVERIE_WRITER_ENABLED"),
        ("", {"REVERIE_STORE_SYNCHRONOUS": "SOMETIMES"}, "store.synchronous"),
        ("", {"REVERIE_DISTILLER_ASK_WAIT_H": "nan"}, "distiller.ask_wait_h must be a finite"),
        ("", {"REVERIE_DISTILLER_ASK_WAIT_H": "inf"}, "distiller.ask_wait_h must be a finite"),
        ("[records]\nlongterm_days = 1e12\n", {}, "records.longterm_days must be at most"),
        ("[distiller]\nask_batch = 9\n", {}, "ask_batch must not exceed"),
    ],
)
def test_bad_settings_are_refused_clearly(
    tmp_path: Path, toml: str, environ: dict[str, str], message: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(")):
        Config.load(path, environ)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        Config.load(tmp_path / "absent.toml")


def test_with_section() -> None:
    c = Config().with_section("caps", memory=100)
    assert c.caps.memory == 100 and Config().caps.memory == 3000
