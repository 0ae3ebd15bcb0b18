"""The instruction detectors on held-out phrasings and on real conversation text: how many
held-out injections they catch, how many held-out legitimate statements they would wrongly
block, and their false-positive rate on the BEAM 100K user messages and the LoCoMo
observations (../shared/data, read in place; skipped if absent).

Two checks are measured: ``instruction_kind`` (rules/injection.py), which every tool write
(memory, topic) and model answer passes, and what the flush refuses to learn from a user
turn — ``aimed_at_agent(text, "user")``, which adds standing orders to act
(rules/directives.py) — plus ``turn_framing`` on whole user messages.

    python -m bench.injection [--show 10]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from pathlib import Path

from bench._common import data_dir
from reverie.rules.directives import aimed_at_agent
from reverie.rules.extraction import sentences
from reverie.rules.injection import instruction_kind, turn_framing
from tests.data import injection_heldout, injection_heldout2, injection_tuning

DATA = data_dir()
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


Check = Callable[[str], str | None]
TOOL: Check = instruction_kind


def FLUSH(text: str) -> str | None:  # noqa: N802 - a constant-like name for a check
    return aimed_at_agent(text, "user")


def held_out(name: str, attacks: tuple[str, ...], legit: tuple[str, ...], check: Check) -> None:
    caught = [t for t in attacks if check(t) is not None]
    blocked = [t for t in legit if check(t) is not None]
    print(
        f"{name}: {len(caught)}/{len(attacks)} injections caught"
        f" ({len(caught) / len(attacks):.1%}), {len(blocked)}/{len(legit)} legitimate"
        f" statements blocked ({len(blocked) / len(legit):.1%})"
    )
    for text in (t for t in attacks if t not in caught):
        print(f"    missed: {text!r}")
    for text in blocked:
        print(f"    blocked: {text!r}")


def false_positives(
    name: str, texts: list[str], show: int, by_sentence: bool, check: Check
) -> None:
    if not texts:
        print(f"{name}: data not found, skipped")
        return
    flagged = [(t, k) for t in texts if (k := check(t)) is not None]
    print(
        f"{name}: {len(flagged)}/{len(texts)} flagged "
        f"({len(flagged) / len(texts):.3%} false positives)"
    )
    if by_sentence:
        parts = [s for t in texts for s in sentences(t)]
        hits = [(s, k) for s in parts if (k := check(s)) is not None]
        print(
            f"    by sentence (what the flush sees): {len(hits)}/{len(parts)}"
            f" ({len(hits) / len(parts):.3%})"
        )
        flagged = flagged or hits
    for text, kind in flagged[:show]:
        print(f"    {kind}: {' '.join(text.split())[:160]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--show", type=int, default=10, help="flagged examples to print")
    args = parser.parse_args()
    sets = (
        ("held-out 2", injection_heldout2.POISONING, injection_heldout2.LEGITIMATE),
        ("held-out  ", injection_heldout.INJECTIONS, injection_heldout.LEGITIMATE),
        ("tuning    ", injection_tuning.INJECTIONS, injection_tuning.LEGITIMATE),
    )
    beam = list(beam_user_messages(DATA / "beam-100k")) if (DATA / "beam-100k").is_dir() else []
    locomo = DATA / "locomo10.json"
    observed = list(locomo_observations(locomo)) if locomo.exists() else []
    for title, check in (("tool writes: instruction_kind", TOOL), ("flush, user turns", FLUSH)):
        print(f"== {title}")
        for name, attacks, legit in sets:
            held_out(name, attacks, legit, check)
        false_positives("BEAM 100K user messages", beam, args.show, True, check)
        false_positives("LoCoMo observations", observed, args.show, False, check)
    print("== turn framing (the flush learns nothing from such a turn)")
    false_positives("BEAM 100K user messages", beam, args.show, False, turn_framing)


if __name__ == "__main__":
    main()
