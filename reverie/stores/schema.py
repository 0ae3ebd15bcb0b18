"""The SQLite schema as an ordered list of migrations; ``schema_version`` records the last one.

Search rows live in one FTS5 table so BM25 ranks live facts, live entries and episodes on
one scale; triggers keep it to live rows, moving superseded facts to ``search_superseded``
(searched on request, and counted to say how many were hidden). A search rowid encodes
its source row: ``rowid = source_rowid * 4 + kind``; ``vectors`` keys embeddings by it.
"""

from __future__ import annotations

from typing import Final

KIND_FORMER: Final = 0  # a live fact's chain's former texts
KIND_FACT: Final = 1
KIND_ENTRY: Final = 2
KIND_EPISODE: Final = 3

MIGRATIONS: Final[tuple[str, ...]] = (
    # 1: the core stores
    """
    CREATE TABLE entries (
        id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL,
        target TEXT NOT NULL,
        content TEXT NOT NULL,
        norm TEXT NOT NULL,
        key TEXT,
        reinforce INTEGER NOT NULL DEFAULT 1,
        status TEXT NOT NULL DEFAULT 'live' CHECK (status IN ('live', 'removed', 'replaced')),
        replaced_by TEXT,
        created_by TEXT NOT NULL,
        session_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        ended_at TEXT
    );
    CREATE INDEX entries_live ON entries (namespace, target, status);

    CREATE TABLE topics (
        namespace TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (namespace, name)
    );

    CREATE TABLE facts (
        id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL,
        topic TEXT NOT NULL,
        content TEXT NOT NULL,
        norm TEXT NOT NULL,
        chain_id TEXT NOT NULL,
        depth INTEGER NOT NULL,
        supersedes TEXT REFERENCES facts (id),
        superseded_by TEXT REFERENCES facts (id),
        created_by TEXT NOT NULL,
        session_id TEXT,
        created_at TEXT NOT NULL,
        invalid_at TEXT,
        subject_key TEXT,
        role_key TEXT,
        skeleton_key TEXT,
        CHECK ((invalid_at IS NULL) = (superseded_by IS NULL))
    );
    CREATE INDEX facts_subject ON facts (namespace, topic, subject_key) WHERE invalid_at IS NULL;
    CREATE INDEX facts_role ON facts (namespace, topic, role_key) WHERE invalid_at IS NULL;
    CREATE INDEX facts_skeleton ON facts (namespace, topic, skeleton_key)
        WHERE invalid_at IS NULL;
    CREATE INDEX facts_live ON facts (namespace, topic, invalid_at);
    CREATE INDEX facts_norm ON facts (namespace, topic, norm);
    CREATE INDEX facts_chain ON facts (chain_id);

    CREATE TABLE skills (
        namespace TEXT NOT NULL,
        name TEXT NOT NULL,
        body TEXT NOT NULL,
        created_by TEXT NOT NULL,
        pinned INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        last_used_at TEXT,
        archived_at TEXT,
        PRIMARY KEY (namespace, name)
    );

    CREATE TABLE ledger (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        ts TEXT NOT NULL,
        namespace TEXT NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        decision TEXT NOT NULL,
        entry_id TEXT,
        target TEXT,
        session_id TEXT,
        trace_id TEXT,
        before TEXT,
        after TEXT,
        detail TEXT
    );
    CREATE INDEX ledger_ns ON ledger (namespace, seq);
    CREATE INDEX ledger_entry ON ledger (entry_id);

    CREATE TABLE episodes (
        id INTEGER PRIMARY KEY,
        namespace TEXT NOT NULL,
        session_id TEXT NOT NULL,
        turn INTEGER NOT NULL,
        user_text TEXT,
        assistant_text TEXT,
        ts TEXT NOT NULL,
        UNIQUE (namespace, session_id, turn)
    );

    CREATE TABLE review_state (
        namespace TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (namespace, key)
    );

    CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        expires_at TEXT NOT NULL
    );

    CREATE VIRTUAL TABLE search_index USING fts5 (
        text, namespace UNINDEXED, tokenize = 'porter unicode61'
    );

    CREATE TRIGGER facts_indexed AFTER INSERT ON facts BEGIN
        INSERT INTO search_index (rowid, text, namespace)
        VALUES (new.rowid * 4 + 1, new.content, new.namespace);
        UPDATE topics SET updated_at = new.created_at
        WHERE namespace = new.namespace AND name = new.topic;
    END;

    CREATE VIRTUAL TABLE search_superseded USING fts5 (
        text, namespace UNINDEXED, tokenize = 'porter unicode61'
    );

    CREATE TRIGGER facts_superseded AFTER UPDATE OF invalid_at ON facts
    WHEN old.invalid_at IS NULL AND new.invalid_at IS NOT NULL BEGIN
        DELETE FROM search_index WHERE rowid = new.rowid * 4 + 1;
        INSERT INTO search_superseded (rowid, text, namespace)
        VALUES (new.rowid * 4 + 1, new.content, new.namespace);
    END;

    CREATE TRIGGER entries_ended AFTER UPDATE OF status ON entries
    WHEN old.status = 'live' AND new.status != 'live' BEGIN
        DELETE FROM search_index WHERE rowid = new.rowid * 4 + 2;
    END;

    CREATE TRIGGER entries_revived AFTER UPDATE OF status ON entries
    WHEN old.status != 'live' AND new.status = 'live' BEGIN
        INSERT INTO search_index (rowid, text, namespace)
        VALUES (new.rowid * 4 + 2, new.content, new.namespace);
    END;

    CREATE TRIGGER entries_indexed AFTER INSERT ON entries BEGIN
        INSERT INTO search_index (rowid, text, namespace)
        VALUES (new.rowid * 4 + 2, new.content, new.namespace);
    END;

    CREATE TRIGGER episodes_indexed AFTER INSERT ON episodes BEGIN
        INSERT INTO search_index (rowid, text, namespace)
        VALUES (new.id * 4 + 3, trim(coalesce('user: ' || new.user_text, '') || char(10)
                || coalesce('assistant: ' || new.assistant_text, ''), char(10)),
                new.namespace);
    END;
    """,
    # 2: the self-learning loop: per-turn extracts, reverie's own text, skill archives
    """
    ALTER TABLE episodes ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE episodes ADD COLUMN weight TEXT;

    CREATE TABLE extracts (
        id INTEGER PRIMARY KEY,
        namespace TEXT NOT NULL,
        session_id TEXT NOT NULL,
        episode_id INTEGER NOT NULL REFERENCES episodes (id),
        speaker TEXT NOT NULL CHECK (speaker IN ('user', 'assistant')),
        text TEXT NOT NULL,
        tag TEXT NOT NULL,
        weight TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (episode_id, speaker, text)
    );
    CREATE INDEX extracts_ns ON extracts (namespace, id);

    CREATE TABLE generated (
        namespace TEXT NOT NULL,
        norm TEXT NOT NULL,
        source TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (namespace, norm)
    );

    ALTER TABLE skills ADD COLUMN archive_dir TEXT;
    """,
    # 3: the episodes still to extract, found without scanning a namespace's history
    """
    CREATE INDEX episodes_unextracted ON episodes (namespace, id) WHERE weight IS NULL;
    """,
    # 4: time order — the ledger's last seq when a turn was recorded, so the flush never
    # lets a turn's reading override a value written after it
    """
    ALTER TABLE episodes ADD COLUMN horizon INTEGER;
    """,
    # 5: embeddings of search rows (keyed by the search rowid), per embedder, float32 blobs
    """
    CREATE TABLE vectors (
        rid INTEGER NOT NULL,
        embedder TEXT NOT NULL,
        namespace TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (embedder, rid)
    ) WITHOUT ROWID;
    CREATE INDEX vectors_ns ON vectors (namespace, embedder);
    """,
    # 6: tool calls the host named with a call id: the answer of each one that committed,
    # written in its transaction, so a host that cancelled a call can learn whether it
    # landed and a retry with the same id never writes twice
    """
    CREATE TABLE tool_calls (
        namespace TEXT NOT NULL,
        call_id TEXT NOT NULL,
        session_id TEXT,
        request TEXT NOT NULL,
        result TEXT NOT NULL,
        ts TEXT NOT NULL,
        PRIMARY KEY (namespace, call_id)
    ) WITHOUT ROWID;
    """,
    # 7: a superseded fact's words find its live successor: the chain's former texts are
    # indexed as one search row of the head (``rowid = head_rowid * 4``, kind 0), so a
    # correction said in few words ("now 12 books") is found by what it corrected, on the
    # same BM25 scale as every other row; newest former text first, as the trigger keeps it,
    # so a chain longer than the row's 4000 chars loses its oldest texts either way
    """
    DROP TRIGGER facts_superseded;
    CREATE TRIGGER facts_superseded AFTER UPDATE OF invalid_at ON facts
    WHEN old.invalid_at IS NULL AND new.invalid_at IS NOT NULL BEGIN
        DELETE FROM search_index WHERE rowid = new.rowid * 4 + 1;
        INSERT INTO search_superseded (rowid, text, namespace)
        VALUES (new.rowid * 4 + 1, new.content, new.namespace);
        INSERT INTO search_index (rowid, text, namespace)
        SELECT h.rowid * 4, substr(new.content || coalesce(char(10) || (
                   SELECT text FROM search_index WHERE rowid = new.rowid * 4), ''), 1, 4000),
               new.namespace
        FROM facts h WHERE h.id = new.superseded_by AND h.invalid_at IS NULL;
        DELETE FROM search_index WHERE rowid = new.rowid * 4;
    END;
    INSERT INTO search_index (rowid, text, namespace)
    SELECT head, substr(group_concat(content, char(10)), 1, 4000), namespace
    FROM (SELECT h.rowid * 4 AS head, o.content AS content, h.namespace AS namespace
          FROM facts h JOIN facts o ON o.chain_id = h.chain_id AND o.invalid_at IS NOT NULL
          WHERE h.invalid_at IS NULL ORDER BY h.rowid, o.depth DESC)
    GROUP BY head;
    """,
    # 8: the live facts a turn taught, found by its session (search brings the best turn's
    # facts): without it, each such search read every live fact of the namespace
    """
    CREATE INDEX facts_session ON facts (namespace, session_id) WHERE invalid_at IS NULL;
    """,
    # 9: seed 003's learning records over the stores that hold them (see records.md):
    # ``learning`` keeps each item's priority, tier and accesses — and the text of the
    # records no other store holds (corrections, errors, lessons learnt by hand); a row is
    # made by trigger whenever an entry, a fact or a skill is, so no write path can miss
    # one. ``namespaces`` counts each namespace's ended sessions (the tiers' clock).
    # Written to be run again over itself (tests roll back to earlier versions).
    """
    CREATE TABLE IF NOT EXISTS namespaces (
        name TEXT PRIMARY KEY,
        sessions INTEGER NOT NULL DEFAULT 0,
        heartbeat_at TEXT,
        archived_at TEXT,
        settings TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL
    ) WITHOUT ROWID;

    CREATE TABLE IF NOT EXISTS learning (
        rn INTEGER PRIMARY KEY,
        namespace TEXT NOT NULL,
        id TEXT NOT NULL,
        kind TEXT NOT NULL,
        priority TEXT NOT NULL DEFAULT 'medium'
            CHECK (priority IN ('low', 'medium', 'high', 'critical')),
        tier TEXT NOT NULL DEFAULT 'hot' CHECK (tier IN ('hot', 'warm', 'cold')),
        status TEXT CHECK (status IN ('active', 'superseded', 'archived', 'resolved')),
        content TEXT,
        session_id TEXT,
        access_count INTEGER NOT NULL DEFAULT 0,
        last_access_at TEXT,
        hot_base INTEGER NOT NULL DEFAULT 0,
        seen_session INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (namespace, id),
        CHECK ((content IS NULL) = (status IS NULL))
    );
    CREATE INDEX IF NOT EXISTS learning_tier ON learning (namespace, tier);

    CREATE TABLE IF NOT EXISTS accesses (
        namespace TEXT NOT NULL,
        id TEXT NOT NULL,
        ts TEXT NOT NULL,
        how TEXT NOT NULL,
        session_id TEXT
    );

    CREATE TABLE IF NOT EXISTS patterns (
        namespace TEXT NOT NULL,
        id TEXT NOT NULL,
        name TEXT NOT NULL,
        trigger TEXT NOT NULL,
        response TEXT NOT NULL,
        examples TEXT NOT NULL,
        facets TEXT NOT NULL,
        sessions INTEGER NOT NULL,
        PRIMARY KEY (namespace, id)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS accesses_record ON accesses (namespace, id, ts);

    CREATE VIRTUAL TABLE IF NOT EXISTS learning_text USING fts5 (
        text, namespace UNINDEXED, tokenize = 'porter unicode61'
    );

    CREATE TRIGGER IF NOT EXISTS learning_indexed AFTER INSERT ON learning
    WHEN new.content IS NOT NULL BEGIN
        INSERT INTO learning_text (rowid, text, namespace)
        VALUES (new.rn, new.content, new.namespace);
    END;

    CREATE TRIGGER IF NOT EXISTS entries_learned AFTER INSERT ON entries BEGIN
        INSERT OR IGNORE INTO learning
            (namespace, id, kind, session_id, seen_session, created_at, updated_at)
        VALUES (new.namespace, new.id, 'entry', new.session_id,
                coalesce((SELECT sessions FROM namespaces WHERE name = new.namespace), 0),
                new.created_at, new.created_at);
    END;

    CREATE TRIGGER IF NOT EXISTS facts_learned AFTER INSERT ON facts BEGIN
        INSERT OR IGNORE INTO learning
            (namespace, id, kind, session_id, seen_session, created_at, updated_at)
        VALUES (new.namespace, new.id, 'fact', new.session_id,
                coalesce((SELECT sessions FROM namespaces WHERE name = new.namespace), 0),
                new.created_at, new.created_at);
    END;

    CREATE TRIGGER IF NOT EXISTS skills_learned AFTER INSERT ON skills BEGIN
        INSERT OR IGNORE INTO learning
            (namespace, id, kind, seen_session, created_at, updated_at)
        VALUES (new.namespace, 'skill:' || new.name, 'skill',
                coalesce((SELECT sessions FROM namespaces WHERE name = new.namespace), 0),
                new.created_at, new.created_at);
    END;

    INSERT OR IGNORE INTO learning (namespace, id, kind, session_id, created_at, updated_at)
    SELECT namespace, id, 'entry', session_id, created_at, created_at FROM entries;
    INSERT OR IGNORE INTO learning (namespace, id, kind, session_id, created_at, updated_at)
    SELECT namespace, id, 'fact', session_id, created_at, created_at FROM facts;
    INSERT OR IGNORE INTO learning (namespace, id, kind, created_at, updated_at)
    SELECT namespace, 'skill:' || name, 'skill', created_at, created_at FROM skills;

    CREATE VIEW IF NOT EXISTS records AS
    SELECT l.rn AS rn, e.rowid * 4 + 2 AS rid, l.namespace, l.id, l.kind,
           e.content AS content, l.priority,
           CASE e.status WHEN 'live' THEN 'active' WHEN 'replaced' THEN 'superseded'
                ELSE 'archived' END AS status,
           l.tier, l.access_count, l.last_access_at, l.seen_session, l.session_id,
           e.target AS place, l.created_at, max(l.updated_at, e.updated_at) AS updated_at
    FROM learning l JOIN entries e ON e.id = l.id WHERE l.kind = 'entry'
    UNION ALL
    SELECT l.rn, f.rowid * 4 + 1, l.namespace, l.id, l.kind, f.content, l.priority,
           iif(f.invalid_at IS NULL, 'active', 'superseded'),
           l.tier, l.access_count, l.last_access_at, l.seen_session, l.session_id,
           f.topic, l.created_at, max(l.updated_at, coalesce(f.invalid_at, f.created_at))
    FROM learning l JOIN facts f ON f.id = l.id WHERE l.kind = 'fact'
    UNION ALL
    SELECT l.rn, NULL, l.namespace, l.id, l.kind, s.body, l.priority,
           iif(s.archived_at IS NULL, 'active', 'archived'),
           l.tier, l.access_count, l.last_access_at, l.seen_session, l.session_id,
           s.name, l.created_at, max(l.updated_at, s.updated_at)
    FROM learning l JOIN skills s ON s.namespace = l.namespace AND 'skill:' || s.name = l.id
    WHERE l.kind = 'skill'
    UNION ALL
    SELECT l.rn, -l.rn, l.namespace, l.id, l.kind, l.content, l.priority, l.status,
           l.tier, l.access_count, l.last_access_at, l.seen_session, l.session_id,
           NULL, l.created_at, l.updated_at
    FROM learning l WHERE l.content IS NOT NULL;
    """,
    # 10: seed 004's M-FLOW graph (docs/graph.md): four layers of nodes (4 entity, 3 facet
    # point, 2 facet, 1 episode — an episode's ``ref`` is the knowledge unit's id), edges
    # from a higher layer to a lower one, each with the sentence that says why it exists,
    # and one full-text table over node labels (``rowid = node id * 2``) and edge
    # descriptions (``edge id * 2 + 1``), kept by triggers. ``graph_marks`` holds the
    # build's watermark per source. Written to be run again over itself.
    """
    CREATE TABLE IF NOT EXISTS graph_nodes (
        id INTEGER PRIMARY KEY,
        namespace TEXT NOT NULL,
        layer INTEGER NOT NULL CHECK (layer BETWEEN 1 AND 4),
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        label TEXT NOT NULL,
        ref TEXT,
        current INTEGER NOT NULL DEFAULT 1,
        broad INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (namespace, layer, key)
    );
    CREATE INDEX IF NOT EXISTS graph_nodes_ref ON graph_nodes (namespace, ref);

    CREATE TABLE IF NOT EXISTS graph_edges (
        id INTEGER PRIMARY KEY,
        namespace TEXT NOT NULL,
        src INTEGER NOT NULL REFERENCES graph_nodes (id),
        dst INTEGER NOT NULL REFERENCES graph_nodes (id),
        description TEXT NOT NULL,
        cost REAL NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (src, dst)
    );
    CREATE INDEX IF NOT EXISTS graph_edges_dst ON graph_edges (dst);
    CREATE INDEX IF NOT EXISTS graph_edges_ns ON graph_edges (namespace);

    CREATE TABLE IF NOT EXISTS graph_marks (
        namespace TEXT NOT NULL,
        source TEXT NOT NULL,
        mark INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (namespace, source)
    ) WITHOUT ROWID;

    CREATE VIRTUAL TABLE IF NOT EXISTS graph_text USING fts5 (
        text, namespace UNINDEXED, layer UNINDEXED, tokenize = 'porter unicode61'
    );

    CREATE TRIGGER IF NOT EXISTS graph_node_indexed AFTER INSERT ON graph_nodes BEGIN
        INSERT INTO graph_text (rowid, text, namespace, layer)
        VALUES (new.id * 2, new.label, new.namespace, new.layer);
    END;

    CREATE TRIGGER IF NOT EXISTS graph_node_relabelled AFTER UPDATE OF label ON graph_nodes
    BEGIN
        DELETE FROM graph_text WHERE rowid = old.id * 2;
        INSERT INTO graph_text (rowid, text, namespace, layer)
        VALUES (new.id * 2, new.label, new.namespace, new.layer);
    END;

    CREATE TRIGGER IF NOT EXISTS graph_node_dropped AFTER DELETE ON graph_nodes BEGIN
        DELETE FROM graph_text WHERE rowid = old.id * 2;
    END;

    CREATE TRIGGER IF NOT EXISTS graph_edge_indexed AFTER INSERT ON graph_edges BEGIN
        INSERT INTO graph_text (rowid, text, namespace, layer)
        VALUES (new.id * 2 + 1, new.description, new.namespace, 0);
    END;

    CREATE TRIGGER IF NOT EXISTS graph_edge_dropped AFTER DELETE ON graph_edges BEGIN
        DELETE FROM graph_text WHERE rowid = old.id * 2 + 1;
    END;
    """,
    # skill drafts (issue 13): gaps no skill covers, drafted for a person to accept or
    # reject; the row is the source of truth, skills/.drafts/<name>/SKILL.md its projection
    """
    CREATE TABLE IF NOT EXISTS skill_drafts (
        namespace TEXT NOT NULL,
        name TEXT NOT NULL,
        gap_key TEXT NOT NULL,
        kind TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('draft', 'accepted', 'rejected')),
        description TEXT NOT NULL,
        triggers TEXT NOT NULL,
        body TEXT NOT NULL,
        evidence TEXT NOT NULL,
        sessions INTEGER NOT NULL,
        score REAL NOT NULL,
        written_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (namespace, name)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS skill_drafts_key ON skill_drafts (namespace, gap_key);
    """,
    # skill activity scores (issue 13, seed 004): each use with its outcome, and each
    # scoring of each skill (the history the reports compare against). Uses recorded
    # before this table are taken from the ledger once, as outcome unknown.
    """
    CREATE TABLE IF NOT EXISTS skill_uses (
        id INTEGER PRIMARY KEY,
        namespace TEXT NOT NULL,
        name TEXT NOT NULL,
        ts TEXT NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('success', 'failure', 'unknown')),
        session_id TEXT
    );
    CREATE INDEX IF NOT EXISTS skill_uses_name ON skill_uses (namespace, name, ts, outcome);

    INSERT INTO skill_uses (namespace, name, ts, outcome, session_id)
    SELECT namespace, substr(entry_id, 7), ts, 'unknown', session_id FROM ledger
    WHERE action = 'use' AND target = 'skill' AND entry_id LIKE 'skill:%'
    AND NOT EXISTS (SELECT 1 FROM skill_uses)
    ORDER BY seq;

    CREATE TABLE IF NOT EXISTS skill_scores (
        id INTEGER PRIMARY KEY,
        namespace TEXT NOT NULL,
        name TEXT NOT NULL,
        scored_at TEXT NOT NULL,
        score REAL NOT NULL,
        tier TEXT NOT NULL,
        calls INTEGER NOT NULL,
        successes INTEGER NOT NULL,
        failures INTEGER NOT NULL,
        quality REAL NOT NULL,
        decay REAL NOT NULL
    );
    CREATE INDEX IF NOT EXISTS skill_scores_name ON skill_scores (namespace, name, id);
    """,
    # the profile and self-model syntheses: each synthesis entry's clauses and their sources
    """
    CREATE TABLE IF NOT EXISTS syntheses (
        namespace TEXT NOT NULL,
        entry_id TEXT NOT NULL,
        target TEXT NOT NULL,
        author TEXT NOT NULL,
        clauses TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (namespace, entry_id)
    );
    CREATE INDEX IF NOT EXISTS syntheses_target ON syntheses (namespace, target, created_at);
    """,
)
