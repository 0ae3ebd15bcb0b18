"""Every number in DESIGN.md as one typed, frozen settings object.

The library never reads the environment on its own: ``Config.load`` is called at the edge
(the CLI, or a host that wants it) with a TOML file and/or an environment mapping.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Final, Self

from reverie.dream.schedule import parse_times, zone
from reverie.errors import ConfigError, quoted

DEFAULT_MEMORY_CAP = 3000
DEFAULT_USER_CAP = 2000
DEFAULT_SOUL_CAP = 1500
DEFAULT_SETTINGS_CAP = 600
DEFAULT_PROFILE_CAP = 600
DEFAULT_SKILLS_CAP = 2000
DEFAULT_TOPIC_READ_FACTS = 50  # facts a topic read returns at most (newest first)
DEFAULT_TOPIC_READ_CHARS = 8_000  # and the characters of fact text it returns at most


@dataclass(frozen=True)
class CapsConfig:
    """Rendered-size caps (characters) of the injected stores."""

    memory: int = DEFAULT_MEMORY_CAP
    user: int = DEFAULT_USER_CAP
    soul: int = DEFAULT_SOUL_CAP
    user_settings: int = DEFAULT_SETTINGS_CAP
    agent_profile: int = DEFAULT_PROFILE_CAP
    skills: int = DEFAULT_SKILLS_CAP
    """The snapshot's skills index: pinned, then most recently used or changed, first;
    the rest are counted ("… and N more")."""


@dataclass(frozen=True)
class WriterConfig:
    """L1: the in-session write path."""

    enabled: bool = True
    max_topics: int = 10
    jaccard_threshold: float = 0.8
    max_content_chars: int = 4000
    max_skill_chars: int = 20000
    max_name_chars: int = 64
    dedupe_candidates: int = 200
    timeout_s: float = 30.0
    topic_read_facts: int = DEFAULT_TOPIC_READ_FACTS
    """A topic read answers with at most this many live facts, newest first, and a count of
    the rest, so a long topic never floods the agent's context."""
    topic_read_chars: int = DEFAULT_TOPIC_READ_CHARS
    """… and with at most this many characters of fact text (always at least one fact)."""


@dataclass(frozen=True)
class ExtractorConfig:
    """L2: per-turn extraction (no model call)."""

    enabled: bool = True
    min_chars: int = 20
    timeout_s: float = 30.0


@dataclass(frozen=True)
class FlusherConfig:
    """L3: the idle flush."""

    enabled: bool = True
    max_memory_adds: int = 2
    max_topic_saves: int = 5
    max_candidates: int = 40
    rules_first: bool = True
    topic_reserve: int = 2
    """Topic slots the flush never fills: the agent can always open a topic of its own."""
    ask_batch: int = 16
    """Candidates the rules are unsure of wait until this many are pending, then go to
    the model in one call (a pre-compaction flush asks for any number)."""
    backlog_rounds: int = 1
    """Flushes that follow an idle's flush while it leaves statements waiting for its
    budget (each with the budget above): a talkative session is not learned from only
    as fast as it goes idle."""
    timeout_s: float = 120.0


@dataclass(frozen=True)
class DistillerConfig:
    """L4: daily distillation."""

    enabled: bool = True
    interval_h: float = 24.0
    max_topics: int = 5
    summary_chars: int = 1000
    min_new_facts: int = 5
    """A summarised topic is summarised again once this many facts were written since;
    meanwhile the snapshot renders it from its live facts, so nothing stale is shown."""
    rules_first: bool = True
    """False: the model summarises every due topic, whatever the rules could do."""
    rules_keep: float = 0.5
    """A topic too long to show whole is summarised by the rules (its deepest and newest
    whole facts) while those keep at least this share of its live text; beyond, it needs
    the model."""
    regrow: float = 2.0
    """A topic the model summarised is asked about again only once its live text is this
    many times what that summary was made from (until then, while the rules cannot keep
    ``rules_keep`` of it, the snapshot renders its newest live facts): calls grow with the
    log of what a topic holds, not with the days it changed on. A summary by the rules
    since ends the wait; with ``rules_first = false`` there is none (every due topic is
    asked)."""
    ask_batch: int = 2
    """The model is asked once this many due topics need it, in one call for them all..."""
    ask_wait_h: float = 168.0
    """... or once one of them has waited this long for a fuller batch (meanwhile it keeps
    its watermark and the snapshot renders its newest live facts). With ``rules_first =
    false`` every due topic is asked about at once."""
    timeout_s: float = 120.0


@dataclass(frozen=True)
class LinterConfig:
    """L5: weekly wiki lint."""

    enabled: bool = True
    interval_h: float = 168.0
    breaker_s: float = 180.0


@dataclass(frozen=True)
class PromoterConfig:
    """L6: weekly promotion of durable topic facts into MEMORY.md."""

    promotion_enabled: bool = True
    interval_h: float = 168.0
    timeout_s: float = 120.0
    min_chain_depth: int = 2
    min_age_h: float = 72.0
    max_candidates: int = 8
    max_writes: int = 2
    rewrite_chars: int = 220
    decided_fifo: int = 400


@dataclass(frozen=True)
class CuratorConfig:
    """L7: skill retirement."""

    enabled: bool = True
    idle_days: float = 90.0
    interval_h: float = 24.0
    overlap_threshold: float = 0.6
    bloat_chars: int = 6000
    timeout_s: float = 60.0
    merge_near_duplicate: float = 0.8
    """Consolidate / trim: a paragraph this similar to another (Jaccard of content words,
    same values in the same order) is a near-duplicate, and only the longer one is kept."""


@dataclass(frozen=True)
class DraftsConfig:
    """Skill gaps and drafts (issue 13), found in the curator's review pass: what users keep
    asking for that no skill covers, drafted for a person to accept or reject."""

    enabled: bool = True
    window_days: float = 30.0
    """The episodes a pass reads: the last this many days."""
    min_sessions: int = 3
    """A request is a gap when asked in at least this many distinct sessions."""
    min_errors: int = 3
    """Errors of one area (clustered like requests) that make a gap."""
    min_procedures: int = 2
    """Times the agent walked the same ordered procedure by hand that make a gap."""
    min_steps: int = 3
    """Numbered steps an assistant turn holds to count as a hand-walked procedure."""
    shared_words: int = 2
    """Content words two requests share, at least, to be one request."""
    similarity: float = 0.25
    """Jaccard of two requests' content words, at least, to be one request."""
    covered_share: float = 0.6
    """Share of a gap's core words a skill's name, description and trigger words hold
    for the skill to cover it: more than half (3 of 4), so a skill that shares only the
    object ("the web app") does not cover another action on it ("deploy the web app")."""
    top_n: int = 3
    """Gaps drafted per pass, best ranked first."""
    stale_days: float = 30.0
    """A skill is stale when none of its trigger words occurred in this many days of
    user turns."""


@dataclass(frozen=True)
class SkillScoresConfig:
    """Skill activity scores (seed 004; the formula is in ``reverie.skills.scores``): the
    curator scores every skill in its pass, and archives agent-built, unpinned skills idle
    ``archive_days`` or more (reversibly; at least ``curator.idle_days``)."""

    auto_archive: bool = True
    archive_days: float = 180.0


DEFAULT_PROFILE_USER_CHARS = 500
DEFAULT_PROFILE_SOUL_CHARS = 400


@dataclass(frozen=True)
class ProfilerConfig:
    """The weekly profile and self-model synthesis
    (docs/skills.md#profile-and-self-model-synthesis): at most
    ``user_chars`` of USER.md and ``soul_chars`` of SOUL.md, never more than the room the
    hand-written entries leave under the cap; under ``min_chars`` of room it skips. A
    quoted entry or record is cut to ``clause_chars``; at most ``max_topics`` topics and
    ``max_lessons`` learning records are named. ``use_model``: a configured model writes
    the prose (checked; the rules' version is kept when the check fails).

    Off by default for now: the synthesis is a USER.md / SOUL.md entry like any other, so
    turning it on changes what ``ns.entries``, search, the graph and the flush's
    near-duplicate checks see (docs/skills.md#profile-and-self-model-synthesis lists what
    that touches)."""

    enabled: bool = False
    interval_h: float = 168.0
    timeout_s: float = 60.0
    user_chars: int = DEFAULT_PROFILE_USER_CHARS
    soul_chars: int = DEFAULT_PROFILE_SOUL_CHARS
    min_chars: int = 60
    clause_chars: int = 120
    max_topics: int = 5
    max_lessons: int = 8
    use_model: bool = True


DEFAULT_REVIEW_CONCURRENCY = 32


@dataclass(frozen=True)
class ReviewerConfig:
    """L8: the bg_review bus."""

    enabled: bool = True
    cooldown_h: float = 6.0
    lease_s: float = 600.0
    concurrency: int = DEFAULT_REVIEW_CONCURRENCY
    """Namespaces a review round reviews at once (``Reverie.review``). More than the model
    takes at once (``model.concurrency``): passes in flight together share the database's
    group commits and group reads, which is what makes a round over thousands short."""


@dataclass(frozen=True)
class ActorConfig:
    """Mailbox and shutdown limits shared by every actor."""

    mailbox_size: int = 64
    ask_timeout_s: float = 60.0
    drain_timeout_s: float = 10.0


DEFAULT_FAIR_WAIT = True


@dataclass(frozen=True)
class StoreConfig:
    """SQLite settings; ``synchronous`` FULL survives power loss, not only process death.
    ``fair_wait`` queues writers of every process on a file lock beside the database, so
    they are served close to arrival order instead of by SQLite's backoff polling."""

    busy_timeout_ms: int = 10000
    synchronous: str = "FULL"
    fair_wait: bool = DEFAULT_FAIR_WAIT


DEFAULT_MODEL_TIMEOUT_S = 8.0
DEFAULT_MODEL_CONNECT_S = 2.0
DEFAULT_RETRY_AFTER_MAX_S = 5.0
DEFAULT_MODEL_BREAKER_S = 60.0
DEFAULT_MODEL_CONCURRENCY = 8


@dataclass(frozen=True)
class ModelConfig:
    """The model seam: empty ``url`` means the offline model. A hung server costs one
    ``timeout_s`` (a timed-out request is not retried), then the runtime's breaker answers
    every stage "deferred" for ``breaker_s`` or until the next review round. A
    ``Retry-After`` up to ``retry_after_max_s`` is waited for; a longer one rests the
    server that long. A schema-invalid answer at temperature 0 is not asked again. At most
    ``concurrency`` requests are in flight at once, whatever the review concurrency."""

    url: str = ""
    api_key: str = ""
    name: str = ""
    timeout_s: float = DEFAULT_MODEL_TIMEOUT_S
    connect_timeout_s: float = DEFAULT_MODEL_CONNECT_S
    retries: int = 2
    backoff_s: float = 0.5
    retry_after_max_s: float = DEFAULT_RETRY_AFTER_MAX_S
    breaker_s: float = DEFAULT_MODEL_BREAKER_S
    concurrency: int = DEFAULT_MODEL_CONCURRENCY


DEFAULT_RECENCY_WEIGHT = 0.05
DEFAULT_RECENCY_HALF_LIFE_H = 72.0


@dataclass(frozen=True)
class EmbedderConfig:
    """The embedding seam, off unless enabled: an empty ``url`` means the packaged offline
    model (``pip install 'reverie[embed]'``), else an OpenAI-compatible ``/v1/embeddings``
    server. ``dim`` 0 takes the server's dimension. Rows are embedded lazily, at search
    time, at most ``max_embed_per_search`` per search (never on the write path); a search
    waits for the embedder at most ``search_budget_s`` (then ranks by BM25 alone), and
    after a failure the embedder rests for ``breaker_s``."""

    enabled: bool = False
    url: str = ""
    api_key: str = ""
    name: str = ""
    dim: int = 0
    timeout_s: float = 30.0
    retries: int = 2
    backoff_s: float = 0.5
    batch: int = 64
    max_embed_per_search: int = 512
    search_budget_s: float = 5.0
    breaker_s: float = 30.0
    paraphrase_similarity: float = 0.9
    """The flush skips a MEMORY/USER/SOUL entry this close to a live one (a paraphrase)."""
    route_similarity: float = 0.75
    """The flush puts a statement this close to a live fact into that fact's topic."""


@dataclass(frozen=True)
class RankingConfig:
    """How search orders hits. Hybrid search fuses the BM25 and the vector ranks by
    reciprocal rank, ``w / (rrf_k + rank)`` summed, with ``w`` 1 for BM25 and
    ``vector_weight`` for the vectors: on LoCoMo the packaged static-embedding model is a
    weaker ranker than BM25, so its list counts half (measured in BENCHMARKS.md; 20 and
    0.5 beat the textbook 60 and 1 there). Vector hits below ``min_similarity`` (cosine)
    are left out, so a query about nothing stored still finds nothing.

    Freshness, always on: a hit's score is multiplied by ``1 + recency_weight ·
    2^(-age / recency_half_life_h)`` (age since it was last written), at most +5 % for a
    row written just now and +2.5 % three days later — a tiebreaker between hits of
    similar relevance, never enough to lift a barely related new row over an exact old
    match. And among live hits about one subject (facts sharing a subject key, entries of
    one key or near-identical wording), the newer takes the better place."""

    recency_weight: float = DEFAULT_RECENCY_WEIGHT
    recency_half_life_h: float = DEFAULT_RECENCY_HALF_LIFE_H
    same_subject_newer_first: bool = True
    same_subject_jaccard: float = 0.6
    candidates: int = 30
    rrf_k: int = 20
    vector_weight: float = 0.5
    min_similarity: float = 0.3
    cold_weight: float = 0.97
    """A COLD learning record's hit (seed 003's tier) scores this share: it ranks below a
    warm or hot hit of like relevance, never below a barely related one (a strict
    "cold last" put a 60-day-old exact match under a new remark that shared one word).
    Kept near 1 because a question may be about anything said long ago: on BEAM, where
    most facts are COLD when asked about, 0.5 lost 4 of 118 held answers and 3 of 39
    updated values ranked first, 0.9 lost 2 and 2, 0.97 lost 1 and none (BENCHMARKS.md).
    ``search(include_cold=False)`` leaves COLD records out."""


@dataclass(frozen=True)
class RecordsConfig:
    """Seed 003's learning records: every stored item's tier (hot, warm, cold), moved by
    the seed's rules at each session's end and at the heartbeat (see docs/records.md)."""

    enabled: bool = True
    warm_after_accesses: int = 3
    """HOT → WARM once a record has been accessed this many times."""
    hot_sessions: int = 3
    """HOT → WARM once this many sessions of its namespace have ended since the record was
    last referenced (HOT keeps the last three sessions' learnings)."""
    cold_sessions: int = 10
    """WARM → COLD after this many ended sessions without an access."""
    longterm_days: float = 30.0
    """Seed 004's long-term rule: → COLD when last recalled (or made) this many days ago…"""
    longterm_recalls: int = 3
    """… and recalled fewer times than this."""
    heartbeat_interval_minutes: float = 60.0
    """Maintenance (the tier rules) at most this often, checked on idle events."""
    access_batch: int = 256
    """Reads' accesses are counted in memory and written in one transaction at the next
    idle or session end, or once this many are waiting."""
    pattern_sessions: int = 3
    """Pattern detection: the same lesson, error or correction seen in this many sessions
    becomes a pattern record."""
    pattern_overlap: float = 0.4
    """Two statements tell the same lesson when the subject words they share (the writer's
    stemmed word sets) carry this share of the shorter one's weight, each word weighed by
    its rarity among the namespace's sessions…"""
    pattern_words: int = 2
    """… and they share at least this many subject words."""
    timeout_s: float = 30.0


@dataclass(frozen=True)
class DreamConfig:
    """Seed 004's dream cycle: a stage of the review pass, due at each of ``times`` (the
    seed's 07:00 and 22:00) in the namespace's timezone, and run on the first idle after
    (see docs/dream.md)."""

    enabled: bool = True
    times: str = "07:00,22:00"
    """When a dream falls due each day, ``HH:MM`` comma-separated; the last is the evening
    dream, which also writes the daily report."""
    timezone: str = ""
    """An IANA zone for ``times``; empty: the timezone the user gave (user_settings), else UTC."""
    rules_first: bool = True
    """The rules write the dream (no call); false: a configured model writes it, every
    line checked, the rules' lines filling what it loses."""
    recall_k: int = 5
    """Long-term recall: this many COLD records recalled before a distillation (the seed's k)."""
    recall_keywords: int = 5
    """… queried with the words of this many of the day's HIGH-weight statements."""
    max_insights: int = 5
    max_actions: int = 3
    max_topic_updates: int = 3
    index_lines: int = 200
    """MEMORY.md's index is kept within this many lines (the seed's cap)."""
    interval_h: float = 12.0
    """Unused by the due-check (``times`` decides); kept for the stages' shared shape."""
    timeout_s: float = 120.0


@dataclass(frozen=True)
class GraphConfig:
    """Seed 004's M-FLOW graph, built by the grapher on idle, at a session's end and when
    asked (see docs/graph.md)."""

    enabled: bool = True
    timeout_s: float = 60.0
    model_names: bool = True
    """With a model other than the offline one: on the dream's ask, the model names new
    episodes' entities and facets (one bounded call; names kept only in the sources'
    words)."""


DEFAULT_PREFETCH_K = 5
DEFAULT_PREFETCH_CHARS = 1500


@dataclass(frozen=True)
class PrefetchConfig:
    """Next-round prefetch (issue 13): after each turn with user text, the records most
    relevant to it are fetched in the background into ``s.prefetched`` (see
    docs/skills.md#next-round-prefetch)."""

    enabled: bool = True
    k: int = DEFAULT_PREFETCH_K
    """At most this many hits are fetched (fewer are shown when the cap is reached)."""
    max_chars: int = DEFAULT_PREFETCH_CHARS
    """The whole block, framing included, is at most this many characters; hits that do
    not fit are left out, best first kept."""
    line_chars: int = 300
    """One hit's line (its label and text, after the ``- `` bullet) is cut at this many
    characters, so one long turn cannot fill the block."""
    graph: bool = False
    """Search the M-FLOW graph (Bundle Search) when it has nodes, instead of the default
    search; off by default: level recall at about seven times the search time
    (BENCHMARKS.md)."""
    timeout_s: float = 10.0
    """A fetch that takes longer is given up (the block stays empty)."""


@dataclass(frozen=True)
class Config:
    """All of reverie's settings; every section has safe defaults."""

    caps: CapsConfig = field(default_factory=CapsConfig)
    writer: WriterConfig = field(default_factory=WriterConfig)
    extractor: ExtractorConfig = field(default_factory=ExtractorConfig)
    flusher: FlusherConfig = field(default_factory=FlusherConfig)
    distiller: DistillerConfig = field(default_factory=DistillerConfig)
    linter: LinterConfig = field(default_factory=LinterConfig)
    promoter: PromoterConfig = field(default_factory=PromoterConfig)
    curator: CuratorConfig = field(default_factory=CuratorConfig)
    skill_scores: SkillScoresConfig = field(default_factory=SkillScoresConfig)
    profiler: ProfilerConfig = field(default_factory=ProfilerConfig)
    reviewer: ReviewerConfig = field(default_factory=ReviewerConfig)
    actors: ActorConfig = field(default_factory=ActorConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    embedder: EmbedderConfig = field(default_factory=EmbedderConfig)
    ranking: RankingConfig = field(default_factory=RankingConfig)
    records: RecordsConfig = field(default_factory=RecordsConfig)
    dream: DreamConfig = field(default_factory=DreamConfig)
    graph: GraphConfig = field(default_factory=GraphConfig)
    drafts: DraftsConfig = field(default_factory=DraftsConfig)
    prefetch: PrefetchConfig = field(default_factory=PrefetchConfig)

    def __post_init__(self) -> None:
        _validate(self)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Self:
        """Build from a ``{section: {key: value}}`` mapping, rejecting unknown names."""
        sections: dict[str, Any] = {}
        known = {f.name: f for f in fields(cls)}
        for name, values in data.items():
            if name not in known:
                raise ConfigError(f"unknown config section {name!r}; known: {sorted(known)}")
            if not isinstance(values, Mapping):
                raise ConfigError(f"config section {name!r} must be a table")
            section_type = _section_type(name)
            sections[name] = _build_section(name, section_type, values)
        return cls(**sections)

    @classmethod
    def load(cls, path: str | Path | None = None, environ: Mapping[str, str] | None = None) -> Self:
        """TOML file first, then ``REVERIE_<SECTION>_<KEY>`` variables on top."""
        data: dict[str, dict[str, Any]] = {}
        if path is not None:
            try:
                with open(path, "rb") as handle:
                    loaded = tomllib.load(handle)
            except OSError as exc:
                raise ConfigError(f"cannot read config file {path}: {exc}") from exc
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
            for name, values in loaded.items():
                if not isinstance(values, dict):
                    raise ConfigError(f"config section {name!r} must be a table")
                data[name] = dict(values)
        for section, key, raw in _env_items(environ or {}):
            data.setdefault(section, {})[key] = _coerce_env(section, key, raw)
        return cls.from_mapping(data)

    def with_section(self, name: str, **changes: Any) -> Config:
        """A copy with some keys of one section changed (tests, simulations)."""
        return replace(self, **{name: replace(getattr(self, name), **changes)})


def _section_type(name: str) -> type[Any]:
    hints = typing.get_type_hints(Config)
    section = hints[name]
    assert isinstance(section, type)
    return section


def _field_type(section: str, key: str) -> Any:
    hints = typing.get_type_hints(_section_type(section))
    if key not in hints:
        known = sorted(hints)
        raise ConfigError(f"unknown config key {section}.{key}; known: {known}")
    return hints[key]


def _build_section(name: str, section_type: type[Any], values: Mapping[str, Any]) -> Any:
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        expected = _field_type(name, key)
        kwargs[key] = _check_type(f"{name}.{key}", expected, value)
    return section_type(**kwargs)


def _check_type(where: str, expected: Any, value: Any) -> Any:
    if isinstance(expected, types.UnionType):
        expected = next(t for t in typing.get_args(expected) if t is not type(None))
    if expected is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, not {value!r}")
        return value
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if expected is int and isinstance(value, bool):
        raise ConfigError(f"{where} must be an integer, not {value!r}")
    if not isinstance(value, expected):
        raise ConfigError(f"{where} must be {expected.__name__}, not {value!r}")
    return value


def _env_items(environ: Mapping[str, str]) -> list[tuple[str, str, str]]:
    sections = sorted((f.name for f in fields(Config)), key=len, reverse=True)
    items: list[tuple[str, str, str]] = []
    for name, raw in environ.items():
        if not name.startswith("REVERIE_"):
            continue
        rest = name.removeprefix("REVERIE_").lower()
        for section in sections:
            if rest.startswith(section + "_"):
                items.append((section, rest.removeprefix(section + "_"), raw))
                break
    return items


def _coerce_env(section: str, key: str, raw: str) -> Any:
    expected = _field_type(section, key)
    where = f"REVERIE_{section.upper()}_{key.upper()}"
    try:
        if expected is bool:
            lowered = raw.strip().lower()
            if lowered in {"1", "true", "yes", "on"}:
                return True
            if lowered in {"0", "false", "no", "off"}:
                return False
            raise ValueError(raw)
        if expected is int:
            return int(raw)
        if expected is float:
            return float(raw)
    except ValueError as exc:
        raise ConfigError(f"{where}={raw!r} is not a valid {expected.__name__}") from exc
    return raw


def _validate(config: Config) -> None:
    for section in fields(config):
        value = getattr(config, section.name)
        for item in dataclasses.fields(value):
            number = getattr(value, item.name)
            if isinstance(number, bool) or not isinstance(number, int | float):
                continue
            if number != number or math.isinf(number):  # NaN: no bound would hold either
                raise ConfigError(f"{section.name}.{item.name} must be a finite number")
            if number < 0:
                raise ConfigError(f"{section.name}.{item.name} must not be negative")
    if not 0.0 < config.writer.jaccard_threshold <= 1.0:
        raise ConfigError("writer.jaccard_threshold must be in (0, 1]")
    if config.store.synchronous.upper() not in {"OFF", "NORMAL", "FULL", "EXTRA"}:
        raise ConfigError("store.synchronous must be OFF, NORMAL, FULL or EXTRA")
    if config.ranking.recency_half_life_h <= 0:
        raise ConfigError("ranking.recency_half_life_h must be positive")
    if not 0.0 < config.ranking.cold_weight <= 1.0:
        raise ConfigError("ranking.cold_weight must be in (0, 1]")
    _check_spans(config.records)
    if not 0.0 < config.records.pattern_overlap <= 1.0:
        raise ConfigError("records.pattern_overlap must be in (0, 1]")
    if config.records.pattern_sessions < 2 or config.records.pattern_words < 1:
        raise ConfigError("records.pattern_sessions must be at least 2, pattern_words 1")
    if not 0.0 < config.ranking.same_subject_jaccard <= 1.0:
        raise ConfigError("ranking.same_subject_jaccard must be in (0, 1]")
    if config.reviewer.concurrency < 1 or config.model.concurrency < 1:
        raise ConfigError("reviewer.concurrency and model.concurrency must be at least 1")
    if config.model.timeout_s <= 0 or config.model.connect_timeout_s <= 0:
        raise ConfigError("model.timeout_s and model.connect_timeout_s must be positive")
    if config.actors.mailbox_size < 1:
        raise ConfigError("actors.mailbox_size must be at least 1")
    if config.distiller.ask_batch > max(1, config.distiller.max_topics):
        raise ConfigError("distiller.ask_batch must not exceed distiller.max_topics")
    _check_dream(config.dream)
    if config.prefetch.timeout_s <= 0:
        raise ConfigError("prefetch.timeout_s must be positive")
    if config.skill_scores.archive_days < config.curator.idle_days:
        raise ConfigError("skill_scores.archive_days must be at least curator.idle_days")
    _check_curator(config.curator)
    _check_drafts(config.drafts)


def _check_drafts(drafts: DraftsConfig) -> None:
    if drafts.min_sessions < 2 or drafts.min_errors < 2 or drafts.min_procedures < 2:
        raise ConfigError("drafts.min_sessions, min_errors and min_procedures must be at least 2")
    if drafts.shared_words < 1 or drafts.min_steps < 2:
        raise ConfigError("drafts.shared_words must be at least 1, drafts.min_steps 2")
    if not 0.0 < drafts.similarity <= 1.0 or not 0.0 < drafts.covered_share <= 1.0:
        raise ConfigError("drafts.similarity and drafts.covered_share must be in (0, 1]")


def _check_dream(dream: DreamConfig) -> None:
    try:
        parse_times(dream.times)
        if dream.timezone:
            zone(dream.timezone)
    except ValueError as exc:
        raise ConfigError(f"dream: {exc}") from exc
    if dream.max_insights < 1 or dream.recall_keywords < 1:
        raise ConfigError("dream.max_insights and dream.recall_keywords must be at least 1")


def _check_curator(curator: CuratorConfig) -> None:
    for name in ("overlap_threshold", "merge_near_duplicate"):
        if not 0.0 < getattr(curator, name) <= 1.0:
            raise ConfigError(f"curator.{name} must be in (0, 1]")


NAMESPACE_KEYS: Final = (
    "caps.memory",
    "caps.user",
    "caps.soul",
    "caps.user_settings",
    "caps.agent_profile",
    "caps.skills",
    "records.warm_after_accesses",
    "records.hot_sessions",
    "records.cold_sessions",
    "records.longterm_days",
    "records.longterm_recalls",
    "records.heartbeat_interval_minutes",
)
"""The settings one namespace may override (``reverie namespace set``): its caps and its
tier numbers. Everything else is the home's."""


def _namespace_key(key: object) -> tuple[str, str]:
    if not isinstance(key, str) or key not in NAMESPACE_KEYS:
        raise ConfigError(
            f"{quoted(key, 60)} cannot be set per namespace; these can: {', '.join(NAMESPACE_KEYS)}"
        )
    section, _, name = key.partition(".")
    return section, name


def override_value(key: str, raw: str) -> int | float:
    """A namespace override's value read from text (the CLI's ``key=value``)."""
    section, name = _namespace_key(key)
    expected = _field_type(section, name)
    try:
        return int(raw) if expected is int else float(raw)
    except ValueError as exc:
        raise ConfigError(f"{key}={quoted(raw, 60)} is not a valid {expected.__name__}") from exc


def overridden(config: Config, overrides: Mapping[str, Any]) -> Config:
    """``config`` with one namespace's overrides (dotted :data:`NAMESPACE_KEYS`) applied,
    each checked as the config file's values are, and positive; a :class:`ConfigError`
    names the first bad key."""
    if not overrides:
        return config
    sections: dict[str, dict[str, Any]] = {}
    for key, value in overrides.items():
        section, name = _namespace_key(key)
        checked = _check_type(key, _field_type(section, name), value)
        if checked != checked or checked <= 0 or math.isinf(checked):
            raise ConfigError(f"{key} must be a positive number, not {quoted(value, 60)}")
        sections.setdefault(section, {})[name] = checked
    changed = replace(config, **{s: replace(getattr(config, s), **v) for s, v in sections.items()})
    _check_spans(changed.records)
    return changed


MAX_DAYS: Final = 36_500.0
"""The longest span a tier rule may wait (a hundred years): past it, times overflow."""


def _check_spans(records: RecordsConfig) -> None:
    if records.longterm_days > MAX_DAYS:
        raise ConfigError(f"records.longterm_days must be at most {MAX_DAYS:g}")
    if records.heartbeat_interval_minutes > MAX_DAYS * 1440:
        raise ConfigError(f"records.heartbeat_interval_minutes must be at most {MAX_DAYS * 1440:g}")
