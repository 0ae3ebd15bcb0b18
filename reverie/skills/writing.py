"""A gap's draft, written by rules from the episodes that revealed it — or by a model,
whose draft is kept only when it passes the same checks as every model answer."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Final

import yaml

from reverie.model.seam import Field, Schema
from reverie.rules.secrets import has_secret, redact
from reverie.rules.similarity import tokens
from reverie.skills.gaps import ERROR, PROCEDURE, Gap, content_words, steps
from reverie.stores.drafts import SkillDraft

SECTIONS: Final = ("## When to use", "## Steps", "## Tools", "## Examples")
_TOOL: Final = re.compile(r"`([^`\n]{2,60})`")
_SENTENCE: Final = re.compile(r"(?<=[.!?])\s")
_SLUG_CHARS: Final = re.compile(r"[^a-z0-9]+")
MAX_EXAMPLES: Final = 5
QUOTE_CHARS: Final = 200


@dataclass(frozen=True, slots=True)
class Written:
    """A draft's text: what it is for, its trigger words and its SKILL.md body."""

    description: str
    triggers: tuple[str, ...]
    body: str
    by: str = "rules"


def slug(gap: Gap, taken: set[str]) -> str:
    """A skill name from the gap's first core words, not one already taken."""
    words = [w for w in surface(gap) if w.isalpha()] or list(gap.core)
    base = _SLUG_CHARS.sub("-", "-".join(words[:3]).casefold()).strip("-")[:56] or "gap"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def surface(gap: Gap) -> tuple[str, ...]:
    """The gap's core words as people wrote them ("staging", not the stem "stag")."""
    said = Counter(t for s in gap.signals for t in tokens(s.text))
    out = []
    for word in gap.core:
        forms = [t for t in said if t == word or content_words(t) == {word}]
        out.append(max(forms, key=lambda t: (said[t], -len(t))) if forms else word)
    return tuple(out)


def _quote(text: str) -> str:
    one = " ".join(redact(text).split())
    return one if len(one) <= QUOTE_CHARS else one[: QUOTE_CHARS - 1] + "…"


def _representative(gap: Gap) -> str:
    """The member that says most of the gap's core words, in the fewest characters."""
    wanted = set(gap.core)
    best = max(gap.signals, key=lambda s: (len(wanted & s.words), -len(s.text)))
    return _quote(best.text)


def _steps(gap: Gap) -> list[str]:
    """The steps the agent walked most often in the evidence, else the first sentence of
    each distinct answer it gave."""
    walked = [steps(s.text if s.kind == PROCEDURE else s.reply) for s in gap.signals]
    walked = [w for w in walked if w]
    if walked:
        return [_quote(s) for s in Counter(tuple(w) for w in walked).most_common(1)[0][0]]
    answers = [s.reply for s in gap.signals if s.reply]
    firsts = dict.fromkeys(_quote(_SENTENCE.split(a.strip(), maxsplit=1)[0]) for a in answers)
    return list(firsts)[:5]


def _tools(gap: Gap) -> list[str]:
    """What the evidence names in backticks (commands, files, tools), most named first."""
    named = Counter(
        m.strip()
        for s in gap.signals
        for text in (s.text, s.reply or "")
        for m in _TOOL.findall(text)
        if not has_secret(m)
    )
    return [t for t, _ in named.most_common(8)]


def describe(gap: Gap) -> str:
    said = _representative(gap)
    if gap.kind == ERROR:
        return f"Recover from the repeated {' '.join(surface(gap)[:3])} errors, like: {said}"
    if gap.kind == PROCEDURE:
        return f"The procedure walked by hand {len(gap.evidence)} times, starting: {said}"
    return f"Handle requests like: {said} (asked in {gap.sessions} sessions)"


def rules_draft(gap: Gap) -> Written:
    """The offline draft: every line taken from the episodes that revealed the gap."""
    description = describe(gap)
    words = surface(gap)
    walked = _steps(gap)
    tools = _tools(gap)
    examples = []
    for s in gap.signals[:MAX_EXAMPLES]:
        examples.append(f'- "{_quote(s.text)}" (session {s.session_id}, episode {s.episode_id})')
    when = {
        ERROR: f"When work on {', '.join(words)} fails again.",
        PROCEDURE: f"When the task needs these steps ({', '.join(words)}).",
    }.get(gap.kind, f"When a user asks about {', '.join(words)}.")
    body = "\n".join(
        [
            f"Description: {description}",
            f"Trigger words: {', '.join(words)}",
            "",
            SECTIONS[0],
            "",
            when,
            "",
            SECTIONS[1],
            "",
            *(
                [f"{i}. {s}" for i, s in enumerate(walked, 1)]
                or ["1. (the episodes hold no steps yet: write them from the examples)"]
            ),
            "",
            SECTIONS[2],
            "",
            *([f"- `{t}`" for t in tools] or ["- none named in the episodes"]),
            "",
            SECTIONS[3],
            "",
            *examples,
        ]
    )
    return Written(description, words, body + "\n")


DRAFT_SCHEMA: Final = Schema(
    (
        Field("reasoning", description="What the examples ask for, before writing."),
        Field("description", max_length=300, description="One line: what the skill does."),
        Field("body", max_length=6000, description="The SKILL.md body with its sections."),
    )
)


def checked(answer: dict[str, object], gap: Gap, rules: Written, limit: int) -> Written | str:
    """A model's draft when it passes every check, else why not (the rules' draft stays)."""
    description, body = str(answer.get("description", "")), str(answer.get("body", ""))
    if body.lstrip().startswith("---"):
        return "the body carries its own front matter"
    missing = [s for s in SECTIONS if s not in body]
    if missing:
        return f"the body lacks the sections {missing}"
    words = ", ".join(rules.triggers)
    text = f"Description: {description}\nTrigger words: {words}\n\n{body.strip()}\n"
    if len(text) > limit:
        return f"the draft is {len(text)} chars; the limit is {limit}"
    if has_secret(text):
        return "the draft holds a secret"
    grounded = frozenset().union(*(content_words(f"{s.text} {s.reply or ''}") for s in gap.signals))
    for line in steps(body.split(SECTIONS[1], 1)[1]):
        if not content_words(line) & grounded:
            return f"a step is not grounded in the episodes: {_quote(line)!r}"
    if not content_words(description) & set(gap.core):
        return "the description names none of the gap's words"
    return Written(_quote(description), rules.triggers, text)


def draft_file(draft: SkillDraft) -> str:
    """``skills/.drafts/<name>/SKILL.md``: the front matter, then the body."""
    front = {
        "name": draft.name,
        "description": draft.description,
        "triggers": list(draft.triggers),
        "state": draft.state,
        "kind": draft.kind,
        "sessions": draft.sessions,
        "evidence": list(draft.evidence),
        "written_by": draft.written_by,
    }
    front_matter = yaml.safe_dump(front, sort_keys=False, allow_unicode=True)
    return "---\n" + front_matter + "---\n\n" + draft.body
