"""Bump ``RULES_VERSION`` when similarity / supersede / extraction rules change the stored
keys (``norm``, subject / role / skeleton keys, a setting's key); homes are re-keyed on open.

A fingerprint of the rules' answers on fixed probes joins it (``reverie.stores.rekey``),
so a change that alters stored keys is caught even when nobody bumps the number.
"""

from __future__ import annotations

from typing import Final

RULES_VERSION: Final = 10  # 2: chat-form extraction, value slots, labels, canonical values
# 3: chat interjections are not subjects; 4: "from A to B" reads hosts with dots;
# 5: "mistake" / "my bad" / "meant" open a correction; "…, not X, …" mid-sentence;
# 6: "30 minutes not 20 min" (a unit word between) names the former value;
# 7: a copula's own words ("is set to", "changed to") are not part of a skeleton;
# 8: "(was X)" names the former value; 9: "£4,500," is one amount, "10,50" a decimal comma,
# "300Ah" a measure (its unit written on it), not an identifier; "votes" stems to "vote"
# 10: days said together ("fri/sat", "mon/wed/fri") are words, not a path-like value
