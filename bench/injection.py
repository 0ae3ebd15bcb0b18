"""The instruction detector (reverie/rules/injection.py) on held-out phrasings and on real
conversation text: how many held-out injections it catches, how many held-out legitimate
preferences it would wrongly block, and its false-positive rate on the BEAM 100K user
messages and the LoCoMo observations (../shared/data, read in place; skipped if absent).

    python -m bench.injection [--show 10]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

from reverie.rules.extraction import sentences
from reverie.rules.injection import instruction_kind
from tests.data import injection_heldout, injection_tuning

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
MARKER = " ->-> "


def beam_user_messages(root: Path) -> Iterator[str]:
    """Every user message of every BEAM 100K conversation, without its id marker."""
    for chat in sorted(root.glob("*/chat.json")):
        for batch in json.loads(chat.read_text()):
            for group in batch.get("turns") or []:
                for message in group:
                    if message.get("role") == "user":
                        yield str(message.get("content") or "").split(MARKER)[0]


def locomo_observations(path: Path) -> Iterator[str]:
    for sample in json.loads(path.read_text()):
        for session in sample["observation"].values():
            for facts in session.values():
                for fact in facts:
                    yield str(fact[0])


def held_out(name: str, module: object) -> None:
    attacks, legit = module.INJECTIONS, module.LEGITIMATE  # type: ignore[attr-defined]
    caught = sum(instruction_kind(t) is not None for t in attacks)
    blocked = [t for t in legit if instruction_kind(t) is not None]
    print(
        f"{name}: {caught}/{len(attacks)} injections caught ({caught / len(attacks):.1%}), "
        f"{len(blocked)}/{len(legit)} legitimate preferences blocked"
        f" ({len(blocked) / len(legit):.1%})"
    )
    for text in blocked:
        print(f"    blocked: {text}")


def false_positives(name: str, texts: list[str], show: int, by_sentence: bool) -> None:
    if not texts:
        print(f"{name}: data not found, skipped")
        return
    flagged = [(t, k) for t in texts if (k := instruction_kind(t)) is not None]
    print(
        f"{name}: {len(flagged)}/{len(texts)} flagged "
        f"({len(flagged) / len(texts):.3%} false positives)"
    )
    if by_sentence:
        parts = [s for t in texts for s in sentences(t)]
        hits = sum(instruction_kind(s) is not None for s in parts)
        print(
            f"    by sentence (what the flush sees): {hits}/{len(parts)} ({hits / len(parts):.3%})"
        )
    for text, kind in flagged[:show]:
        print(f"    {kind}: {' '.join(text.split())[:160]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--show", type=int, default=10, help="flagged examples to print")
    args = parser.parse_args()
    held_out("held-out", injection_heldout)
    held_out("tuning  ", injection_tuning)
    beam = list(beam_user_messages(DATA / "beam-100k")) if (DATA / "beam-100k").is_dir() else []
    false_positives("BEAM 100K user messages", beam, args.show, by_sentence=True)
    locomo = DATA / "locomo10.json"
    observed = list(locomo_observations(locomo)) if locomo.exists() else []
    false_positives("LoCoMo observations", observed, args.show, by_sentence=False)


if __name__ == "__main__":
    main()
