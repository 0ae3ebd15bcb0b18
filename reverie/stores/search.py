"""Search over live facts, entries and episodes: SQLite FTS5 ranked by BM25, fused with the
namespace's vector ranks by reciprocal rank when an embedder has embedded it, then freshness.

Freshness (seed 004's locus coeruleus) is always on: a small, decaying boost for rows
written recently, and, among live hits about one subject, the newer first (see
:class:`~reverie.config.RankingConfig` for the numbers and why they are small).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final

from reverie.config import RankingConfig
from reverie.embedding.similar import top
from reverie.frozen import quick_init
from reverie.rules.routing import says_switch, switched_from
from reverie.rules.similarity import STOPWORDS, jaccard, tokens, values, word_set
from reverie.rules.supersede import (
    changes_value,
    claim_replaced,
    competes,
    denies_held,
    supersedes,
)
from reverie.rules.value_slots import answer_alike, changes_asked, competes_asked, words_of
from reverie.stores import vectors as vector_store
from reverie.stores.db import fetchall, fetchone
from reverie.stores.records import SearchHit, SearchResults
from reverie.stores.schema import KIND_ENTRY, KIND_FACT

_DEFAULT_RANKING = RankingConfig()


def match_expression(text: str, *, keep_stopwords: bool = False) -> str | None:
    """A safe FTS5 query: every token quoted, OR-ed (recall first, BM25 orders); stop words
    are left out unless they are all there is."""
    found = tokens(text)
    words: list[str] = []
    kept = found if keep_stopwords else [t for t in found if t not in STOPWORDS]
    for token in kept or found:
        for part in token.replace('"', " ").split():
            if part not in words:
                words.append(part)
    if not words:
        return None
    return " OR ".join(f'"{w}"' for w in words[:64])


_TOP = """
    SELECT rowid AS rid, text, bm25({table}) AS rank FROM {table}
    WHERE {table} MATCH ? AND namespace = ? ORDER BY rank LIMIT ?
"""
_GIVEN = """
    SELECT c.value AS rid, coalesce(s.text, o.text) AS text, 0.0 AS rank FROM json_each(?) c
    LEFT JOIN search_index s ON s.rowid = c.value
    LEFT JOIN search_superseded o ON o.rowid = c.value
"""
_DETAILS = """
    WITH top AS ({top})
    SELECT top.rid + (top.rid % 4 = 0) AS rid, iif(top.rid % 4 = 0, f.content, top.text) AS text,
           top.rank, f.id AS fact_id, f.topic AS topic,
           f.subject_key AS subject_key, f.created_at AS fact_at, f.invalid_at AS invalid_at,
           e.id AS entry_id, e.target AS target, e.key AS entry_key, e.updated_at AS entry_at,
           p.session_id AS session_id, p.turn AS turn, p.ts AS episode_at
    FROM top
    LEFT JOIN facts f ON top.rid % 4 IN (0, 1) AND f.rowid = top.rid / 4
    LEFT JOIN entries e ON top.rid % 4 = 2 AND e.rowid = top.rid / 4
    LEFT JOIN episodes p ON top.rid % 4 = 3 AND p.id = top.rid / 4
    WHERE iif(top.rid % 4 = 0, f.content, top.text) IS NOT NULL
    ORDER BY top.rank
"""


@quick_init
@dataclass(frozen=True, slots=True)
class _Ranked:
    """A hit while it is ranked: the public hit, its search rowid and what freshness reads."""

    rid: int
    hit: SearchHit
    live: bool
    subject: tuple[str, ...] | None


def _candidate(row: sqlite3.Row) -> _Ranked:
    rid, score = int(row["rid"]), -float(row["rank"])
    kind = rid % 4
    subject: tuple[str, ...] | None
    if kind == KIND_FACT:
        live = row["invalid_at"] is None
        subject = ("fact", row["subject_key"]) if row["subject_key"] else None
        hit = SearchHit(
            "fact",
            row["fact_id"],
            row["text"],
            score,
            topic=row["topic"],
            written_at=row["fact_at"],
        )
        return _Ranked(rid, hit, live, subject)
    if kind == KIND_ENTRY:
        subject = ("entry", row["target"], row["entry_key"]) if row["entry_key"] else None
        hit = SearchHit(
            "entry",
            row["entry_id"],
            row["text"],
            score,
            target=row["target"],
            written_at=row["entry_at"],
        )
        return _Ranked(rid, hit, True, subject)
    hit = SearchHit(
        "episode",
        f"ep-{rid // 4}",
        row["text"],
        score,
        session_id=row["session_id"],
        turn=row["turn"],
        written_at=row["episode_at"],
    )
    return _Ranked(rid, hit, True, None)


def search(
    conn: sqlite3.Connection,
    namespace: str,
    query: str,
    k: int,
    *,
    include_superseded: bool = False,
    now: datetime | None = None,
    ranking: RankingConfig = _DEFAULT_RANKING,
    query_vector: Sequence[float] | None = None,
    embedder: str | None = None,
    include_cold: bool = True,
) -> SearchResults:
    """The top ``k`` live rows: BM25 (FTS5 keeps only the best few while it scans), fused
    with the nearest vectors of ``embedder`` when a ``query_vector`` is given, then the
    freshness of ``now``; superseded matches are counted, or searched too."""
    expression = match_expression(query)
    if expression is None or k <= 0:
        return SearchResults([], 0)
    pool = max(k, ranking.candidates)
    ranked = _lexical(conn, namespace, expression, pool, include_superseded)
    if query_vector is not None and embedder is not None:
        near = vector_store.live(conn, namespace, embedder, include_superseded=include_superseded)
        similar = [
            (rid, s) for rid, s in top(query_vector, near, pool) if s >= ranking.min_similarity
        ]
        if similar:
            ranked = _fuse(conn, ranked, [rid for rid, _ in similar], ranking)
    ranked = _with_what_was_learned(conn, namespace, ranked)
    cold = _cold(conn, namespace, ranked)
    if not include_cold:
        ranked = [r for r in ranked if r.hit.id not in cold]
    ordered = _sources_after(_freshen(ranked, now, ranking, cold))
    if ranking.same_subject_newer_first:  # last: a fact moved up before its turn still goes
        _corrections_first(ordered, k, words_of(query))  # behind the newer value said later
    hits = [r.hit for r in ordered[:k]]
    if include_superseded:
        return SearchResults(hits, 0)
    counted = fetchone(
        conn,
        "SELECT count(*) FROM search_superseded WHERE search_superseded MATCH ? AND namespace = ?",
        (expression, namespace),
    )
    return SearchResults(hits, int(counted[0]) if counted else 0)


def _lexical(
    conn: sqlite3.Connection, namespace: str, expression: str, pool: int, superseded: bool
) -> list[_Ranked]:
    params = (expression, namespace, pool)
    sql = _DETAILS.format(top=_TOP.format(table="search_index"))
    rows = fetchall(conn, sql, params)
    if superseded:
        rows += fetchall(conn, _DETAILS.format(top=_TOP.format(table="search_superseded")), params)
    best: dict[int, _Ranked] = {}  # a fact found by its own words and by its chain's: once
    for row in rows:
        found = _candidate(row)
        if found.rid not in best or best[found.rid].hit.score < found.hit.score:
            best[found.rid] = found
    ranked = sorted(best.values(), key=lambda r: r.hit.score, reverse=True)
    return ranked[:pool]


def reciprocal_rank(
    *rankings: Sequence[int], k: int = 60, weights: Sequence[float] = ()
) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion: each ranking (best first) gives an item ``w / (k + rank)``
    (``w`` its weight, 1 unless given), summed over rankings; ``(item, score)`` best first
    (ties keep first-seen order)."""
    scores: dict[int, float] = {}
    for i, ranking in enumerate(rankings):
        weight = weights[i] if i < len(weights) else 1.0
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda pair: pair[1], reverse=True)


def _fuse(
    conn: sqlite3.Connection, lexical: list[_Ranked], semantic: list[int], ranking: RankingConfig
) -> list[_Ranked]:
    """BM25 and vector ranks fused by reciprocal rank; a row only the vectors found is
    read here."""
    weights = (1.0, ranking.vector_weight)
    lists = ([r.rid for r in lexical], semantic)
    scores = dict(reciprocal_rank(*lists, k=ranking.rrf_k, weights=weights))
    known = {r.rid: r for r in lexical}
    unseen = [rid for rid in semantic if rid not in known]
    if unseen:
        sql = _DETAILS.format(top=_GIVEN)
        for row in fetchall(conn, sql, (json.dumps(unseen),)):
            known[int(row["rid"])] = _candidate(row)
    fused = [replace(r, hit=replace(r.hit, score=scores[rid])) for rid, r in known.items()]
    return sorted(fused, key=lambda r: r.hit.score, reverse=True)


def freshness(age_h: float, ranking: RankingConfig = _DEFAULT_RANKING) -> float:
    """The recency multiplier of a row written ``age_h`` hours ago: ``1 + w · 2^(-age / h)``
    (a row from the future counts as written now)."""
    age = max(0.0, age_h)
    decay: float = 0.5 ** (age / ranking.recency_half_life_h)
    return 1.0 + ranking.recency_weight * decay


_COLD = "SELECT id FROM learning WHERE namespace = ? AND tier = 'cold'"


def _cold(conn: sqlite3.Connection, namespace: str, ranked: list[_Ranked]) -> frozenset[str]:
    """The COLD records among the hits (seed 003's tier, see :mod:`reverie.stores.learning`)."""
    ids = [r.hit.id for r in ranked if r.hit.kind != "episode"]
    if not ids:
        return frozenset()
    marks = ",".join("?" * len(ids))
    sql = f"{_COLD} AND id IN ({marks})"
    return frozenset(row[0] for row in conn.execute(sql, (namespace, *ids)))


def _age_h(written_at: str | None, now: datetime | None) -> float | None:
    if written_at is None or now is None:
        return None
    try:
        return (now - datetime.fromisoformat(written_at)).total_seconds() / 3600.0
    except (ValueError, TypeError):
        return None


def _freshen(
    ranked: list[_Ranked],
    now: datetime | None,
    ranking: RankingConfig = _DEFAULT_RANKING,
    cold: frozenset[str] = frozenset(),
) -> list[_Ranked]:
    """Apply the recency boost and the COLD records' weight, re-sort, then put the newer of
    each same-subject group of live hits in the better place (the places, and their
    scores, stay where they were)."""
    boosted = []
    for r in ranked:
        age = _age_h(r.hit.written_at, now)
        weight = freshness(age, ranking) if age is not None else 1.0
        if r.hit.id in cold and r.hit.kind != "episode":
            weight *= ranking.cold_weight
        if weight != 1.0:
            r = replace(r, hit=replace(r.hit, score=r.hit.score * weight))
        boosted.append(r)
    boosted.sort(key=lambda r: r.hit.score, reverse=True)
    if ranking.same_subject_newer_first:
        _newer_first(boosted, ranking.same_subject_jaccard)
    return boosted


def _corrections_first(ranked: list[_Ranked], k: int, asked: frozenset[str]) -> None:
    """A live fact or entry that gives another's thing a newer value takes the better place
    of the two: a correction the supersede rule could not act on (across topics, or a
    change of one value of many), or a new value said with no word of change. Only the
    ``k`` hits returned are compared, and only those holding values."""
    facts = [
        i
        for i, r in enumerate(ranked[:k])
        if r.live and r.hit.kind != "episode" and _holds_value(r.hit.text)
    ]
    for x, i in enumerate(facts):
        for j in facts[x + 1 :]:
            above, below = ranked[i], ranked[j]
            if (below.hit.written_at or "", below.rid) <= (above.hit.written_at or "", above.rid):
                continue  # one flush writes in the order things were said: rowids break ties
            if _newer_value(below.hit.text, above.hit.text, asked) or (
                j < _ASKED_WINDOW and answer_alike(below.hit.text, above.hit.text, asked)
            ):
                ranked[i] = replace(below, hit=replace(below.hit, score=above.hit.score))
                ranked[j] = replace(above, hit=replace(above.hit, score=below.hit.score))


_NAMED = re.compile(r"(?<=\w )[A-Z][a-z]")  # a name inside a text: a value of its own kind


def _holds_value(text: str) -> bool:
    """A value, a name inside the text, or a switch to a name that opens it ("Tilly is
    taking over the desk")."""
    return bool(values(text) or _NAMED.search(text) or says_switch(text))


_SOURCE_MIN = 24  # chars: a shorter fact is too common a phrase to name its source


def _plain(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


_COVERED = 0.3  # of the user's side of a turn: its facts say what it said
_SAYS_MOST = 0.6  # of it: the facts learned from the best hit say it in its place


def _sources_after(ranked: list[_Ranked]) -> list[_Ranked]:
    """One thing learned, shown first: a live fact or entry taken from an episode that hit
    too moves up to just before that episode; when the turn's facts say 30 % or more of
    what the user said in it (``_COVERED``), the turn goes after every other hit instead (once is
    enough; it stays in the pool and in the log). Scores keep their places."""
    plain = {
        r.rid: text
        for r in ranked
        if r.live and r.hit.kind != "episode" and len(text := _plain(r.hit.text)) >= _SOURCE_MIN
    }
    if not plain:
        return ranked
    out: list[_Ranked] = []
    told: set[int] = set()  # turns whose facts say most of them
    for r in ranked:
        if r in out:
            continue  # a fact already placed before its turn
        if r.hit.kind == "episode":
            said = _plain(r.hit.text)
            taken = [x for x in ranked if x.rid in plain and plain[x.rid] in said]
            if sum(len(plain[x.rid]) for x in taken) >= _COVERED * len(_user_side(r)):
                told.add(r.rid)
            out += [x for x in taken if x not in out]
        out.append(r)
    out = [r for r in out if r.rid not in told] + [r for r in out if r.rid in told]
    scores = sorted((r.hit.score for r in ranked), reverse=True)
    return [replace(r, hit=replace(r.hit, score=x)) for r, x in zip(out, scores, strict=True)]


_LEARNED_FROM = """
    SELECT rowid * 4 + 1, content FROM facts
    WHERE namespace = ? AND session_id = ? AND invalid_at IS NULL ORDER BY rowid
"""
_PER_TURN = 2  # what the best turn adds to the pool, at most


def _with_what_was_learned(
    conn: sqlite3.Connection, namespace: str, ranked: list[_Ranked]
) -> list[_Ranked]:
    """When the best hit is a turn, the live facts taken from it join the pool even when
    the query's words are not theirs (not its entries: how to reply, who the user is, are
    not what a query for knowledge asks): the turn matched (often by the words the
    assistant answered with), and what was learned from it is the answer in its stored,
    current form. Only when they say most of what the user said in the turn
    (``_says_most``, ``_SAYS_MOST``): each takes the turn's score, and
    :func:`_sources_after` shows them in its place and the turn last — one fact moves no
    other hit, two move the rest down one place. At most ``_PER_TURN``, in the order they
    were written."""
    best = ranked[0] if ranked else None
    if best is None or best.hit.kind != "episode" or not best.hit.session_id:
        return ranked
    said, known = _plain(best.hit.text), {r.rid for r in ranked}
    learned = [
        (int(rid), str(content))
        for rid, content in fetchall(conn, _LEARNED_FROM, (namespace, best.hit.session_id))
        if rid not in known and len(text := _plain(content)) >= _SOURCE_MIN and text in said
    ][:_PER_TURN]
    if not learned or not _says_most(best, [content for _, content in learned], ranked):
        return ranked
    given = json.dumps([rid for rid, _ in learned])
    extra = [_candidate(row) for row in fetchall(conn, _DETAILS.format(top=_GIVEN), (given,))]
    extra = [replace(x, hit=replace(x.hit, score=best.hit.score)) for x in extra]
    return sorted(ranked + extra, key=lambda r: r.hit.score, reverse=True)


def _says_most(turn: _Ranked, learned: list[str], ranked: list[_Ranked]) -> bool:
    """Whether the facts learned from ``turn`` (brought, or found by their own words) say
    most of what the user said in it: then they take its place and the turn goes last."""
    said = _plain(turn.hit.text)
    own = [r.hit.text for r in ranked if r.hit.kind == "fact" and r.live]
    texts = {t for t in (_plain(x) for x in [*learned, *own]) if len(t) >= _SOURCE_MIN}
    covered = sum(len(t) for t in texts if t in said)
    return covered >= _SAYS_MOST * len(_user_side(turn))


def _user_side(r: _Ranked) -> str:
    """The user's words of an episode hit ("user: …\nassistant: …")."""
    text = r.hit.text.split("\nassistant:", 1)[0]
    return _plain(text.removeprefix("user:"))


# hits: two live answers to one question (``answer_alike``: "my sitter Kaylee does school
# pickup on weekdays" / "Mrs. Dunn offered to do my weekday pickups") are put in time order,
# the newer first, only this high — so what is found is not changed, only its order
_ASKED_WINDOW = 5


def _newer_value(new_text: str, old_text: str, asked: frozenset[str]) -> bool:
    return (
        supersedes(new_text, old_text)
        or changes_value(new_text, old_text)
        or competes(new_text, old_text)
        or changes_asked(new_text, old_text, asked)
        or competes_asked(new_text, old_text, asked)
        or claim_replaced(new_text, old_text)
        or switched_from(new_text, old_text)
        or denies_held(new_text, old_text)
    )


def _subjects(ranked: list[_Ranked], threshold: float) -> dict[int, list[int]]:
    """Positions of live hits grouped by subject: facts of different topics sharing a
    subject key, entries of one target sharing a key, or entries of one target worded
    near-identically. (Two live facts of one topic about one subject are ones the
    supersede rule judged compatible — "Caroline is researching adoption agencies" and
    "Caroline is planning to continue her education" — so time does not order them.)"""
    groups: dict[int, list[int]] = {}
    keys: dict[tuple[str, ...], int] = {}
    words: list[tuple[int, str | None, frozenset[str]]] = []  # (group, target, words)
    for i, r in enumerate(ranked):
        if not r.live or r.hit.kind == "episode":
            continue
        group = keys.setdefault(r.subject, i) if r.subject is not None else i
        if r.subject is None and r.hit.kind == "entry":
            mine = word_set(r.hit.text)
            for other, target, theirs in words:
                if target == r.hit.target and jaccard(mine, theirs) >= threshold:
                    group = other
                    break
            words.append((group, r.hit.target, mine))
        groups.setdefault(group, []).append(i)
    return {g: places for g, places in groups.items() if _several(ranked, places)}


def _several(ranked: list[_Ranked], places: list[int]) -> bool:
    if ranked[places[0]].hit.kind == "fact":
        return len({ranked[i].hit.topic for i in places}) > 1
    return len(places) > 1


def _newer_first(ranked: list[_Ranked], threshold: float) -> None:
    for places in _subjects(ranked, threshold).values():
        members = sorted(
            (ranked[i] for i in places),
            key=lambda r: (r.hit.written_at or "", r.rid),
            reverse=True,
        )
        for place, member in zip(places, members, strict=True):
            score = ranked[place].hit.score
            ranked[place] = replace(member, hit=replace(member.hit, score=score))


_ROW_TABLES: Final = frozenset({"search_index", "learning_text"})


def put_row(conn: sqlite3.Connection, table: str, rowid: int, text: str, namespace: str) -> None:
    """Set one full-text row's text (an FTS5 row is replaced, not updated in place)."""
    assert table in _ROW_TABLES, table
    conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
    conn.execute(
        f"INSERT INTO {table} (rowid, text, namespace) VALUES (?, ?, ?)", (rowid, text, namespace)
    )


_REINDEX: Final = (
    "DELETE FROM search_index WHERE namespace = :ns AND rowid % 4 != 0",
    """INSERT INTO search_index (rowid, text, namespace)
       SELECT rowid * 4 + 1, content, namespace FROM facts
       WHERE namespace = :ns AND invalid_at IS NULL""",
    """INSERT INTO search_index (rowid, text, namespace)
       SELECT rowid * 4 + 2, content, namespace FROM entries
       WHERE namespace = :ns AND status = 'live'""",
    """INSERT INTO search_index (rowid, text, namespace)
       SELECT id * 4 + 3, trim(coalesce('user: ' || user_text, '') || char(10)
              || coalesce('assistant: ' || assistant_text, ''), char(10)), namespace
       FROM episodes WHERE namespace = :ns""",
    "DELETE FROM search_superseded WHERE namespace = :ns",
    """INSERT INTO search_superseded (rowid, text, namespace)
       SELECT rowid * 4 + 1, content, namespace FROM facts
       WHERE namespace = :ns AND invalid_at IS NOT NULL""",
    "DELETE FROM learning_text WHERE namespace = :ns",
    """INSERT INTO learning_text (rowid, text, namespace)
       SELECT rn, content, namespace FROM learning
       WHERE namespace = :ns AND content IS NOT NULL""",
)


def reindex(conn: sqlite3.Connection, namespace: str) -> int:
    """Seed 003's ``prime``: the namespace's search rows made again from the rows they
    index — live facts, live entries, episodes, superseded facts, log records — as the
    triggers make them; how many rows it holds now. A chain's row of former texts (kind 0)
    is kept as it is: it also holds what a session said and collapsed into the fact, which
    only that row keeps."""
    for sql in _REINDEX:
        conn.execute(sql, {"ns": namespace})
    row = conn.execute(
        "SELECT (SELECT count(*) FROM search_index WHERE namespace = :ns)"
        " + (SELECT count(*) FROM search_superseded WHERE namespace = :ns)"
        " + (SELECT count(*) FROM learning_text WHERE namespace = :ns)",
        {"ns": namespace},
    ).fetchone()
    return int(row[0])
