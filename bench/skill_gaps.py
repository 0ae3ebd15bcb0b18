"""Gap detection (issue 13) over a large month of requests: its cost against the floor of
reading each request's words once, and whether the planted gaps — and only they — are found.

    python -m bench.skill_gaps [N]

N requests (default 5000) in N/4 sessions: random six-word requests over the shared word
list (each pair of them sharing a word or two by chance), and ten planted needs, each
asked in three to five sessions in different words. Printed: the time of ``gaps()``, the
baseline (content words of every request, uncached), their ratio, planted needs found and
gaps that are not a planted need.
"""

from __future__ import annotations

import random
import sys
import time

from bench._common import WORDS
from reverie.config import DraftsConfig
from reverie.rules.similarity import word_set
from reverie.skills.gaps import REQUEST, Signal, content_words, gaps

NEEDS = [
    ("rotate", "certificate", "proxy"),
    ("restore", "snapshot", "volume"),
    ("export", "invoice", "spreadsheet"),
    ("reset", "password", "mailbox"),
    ("resize", "disk", "database"),
    ("renew", "domain", "registrar"),
    ("purge", "cdn", "assets"),
    ("rebuild", "search", "index"),
    ("archive", "tickets", "quarter"),
    ("translate", "release", "notes"),
]
FRAMES = ("How do I {} the {} on the {}?", "Please {} my {} {} today.", "Can you {} {} for {}?")


def month(n: int, rng: random.Random) -> list[Signal]:
    sessions = max(4, n // 4)
    out = []
    for i in range(n):
        words = rng.sample(WORDS, 6)
        out.append(Signal(REQUEST, i, f"s{rng.randrange(sessions)}", " ".join(words)))
    for k, need in enumerate(NEEDS):
        for j in range(3 + k % 3):
            text = FRAMES[j % 3].format(*need)
            out.append(Signal(REQUEST, n + k * 10 + j, f"need{k}-{j}", text))
    rng.shuffle(out)
    return out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    signals = month(n, random.Random(13))
    cfg = DraftsConfig()
    start = time.perf_counter()
    for s in signals:  # the floor: every request's words, read once, uncached
        word_set.__wrapped__(s.text)
    baseline = time.perf_counter() - start
    word_set.cache_clear()
    start = time.perf_counter()
    found = gaps(signals, [], [], cfg)
    took = time.perf_counter() - start
    planted = {frozenset(content_words(" ".join(need))) for need in NEEDS}
    hits = sum(1 for need in planted if any(need <= set(g.core) for g in found))
    wrong = [g.core for g in found if not any(need <= set(g.core) for need in planted)]
    print(
        f"requests {len(signals)}, gaps() {took * 1000:.1f} ms, baseline {baseline * 1000:.1f} ms"
    )
    print(f"ratio gaps/baseline {took / baseline:.2f}")
    print(f"planted needs found {hits}/{len(NEEDS)}, other gaps {len(wrong)} {wrong[:5]}")


if __name__ == "__main__":
    main()
