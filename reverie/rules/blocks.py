"""Pasted blocks are not statements: code, logs, stack traces, shell sessions, diffs,
JSON/YAML, markdown tables and LaTeX are recognised by their shape and cut out of a turn
before it is split into sentences — fenced or not.

The decision is structural: how much of a line is punctuation a sentence does not use,
whether it is laid out like a program (indentation, a keyword of a programming language
followed by an identifier, an assignment, a call), like a log (a timestamp or level in
front), like a table (pipes) or like markup. A prose line is kept even when it holds
values — "The bucket is s3://acme-logs-eu" is a statement, not a paste. A line that only
leads into a paste ("here's what I have so far:") goes with the paste.
"""

from __future__ import annotations

import re
from typing import Final

_FENCE: Final = re.compile(r"^\s*(```|~~~)")
_BULLET: Final = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s+\S")
_HEADING: Final = re.compile(r"^\s{0,3}#{1,6}\s")
_RULE: Final = re.compile(r"^\s*(?:[-*_=]\s*){3,}$")
_TABLE: Final = re.compile(r"^\s*\|.*\|\s*$|^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$")
# the marks of machine output inside a line: a memory address, file:line:col, a bracketed
# uptime or level, an upper-case label such as "FATAL:", a stack frame, a JS import
_MACHINE: Final = re.compile(
    r"0x[0-9a-fA-F]{6,}|(?<![\w/.-])[\w/.-]{1,200}\.\w{1,5}:\d+(?::\d+)?\b|^\s*\[\s*\d+\.\d+\]"
    # a class's full name: "org.app.Main"
    r"|(?<![\w.])[a-z]\w{0,40}(?:\.[a-z]\w{0,40}){2,8}\.[A-Z]"
    r"|^\s*(?:FATAL|ERROR|WARN|WARNING|INFO|DEBUG|TRACE|HINT|DETAIL|CONTEXT|STATEMENT|PANIC"
    r"|CRITICAL|SEVERE|NOTICE|LOG|EXC_\w+)\b:?\s|^\s*Exception in thread\b|^\s*Caused by:"
    r"|^\s*\d+\s+[\w.$-]+\s+0x|^\s*import\s*\{|^\s*export\s+(?:default\s+)?\w"
    r"|^\s*(?:Chain|Plan|Result|Error|Warning)\b[^.!?]*(?:\(|#\d|:\s*\d)"
)
# a compiler's or linker's diagnostic, however wordy its message: a file and its line in
# brackets ("shader.cpp(97): error C4996: …"), or a tool's name before "error:" ("ld: error:
# undefined symbol …")
_DIAGNOSTIC: Final = re.compile(
    r"^\s*(?:\S{1,200}\.\w{1,5}\(\d+(?:,\d+)?\)\s*|[\w.+-]{1,40}):\s+(?:fatal\s+)?"
    r"(?:error|warning)(?:\s+[A-Z]{1,4}\d{2,6})?:\s"
)
_LOG: Final = re.compile(
    r"^\s*\[?(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\d\d:\d\d:\d\d(?:[.,]\d+)?\b|\d{2}/\w{3}/\d{4}"
    r"|\d{1,2}/\d{1,2}/\d{2,4}[ T]\d\d:\d\d)"
    r"|^\s*\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL|CRITICAL|NOTICE)\]?[\s:|-]"
)
_TRACE: Final = re.compile(
    r"^\s*(?:Traceback \(most recent call last\)|File \"[^\"]+\", line \d+"
    r"|at [\w$.<>]+\([^)]*\)|\w+(?:\.\w+)*(?:Error|Exception|Warning)\b(?::|$)|\.\.\. \d+ more)"
)
_PROMPT: Final = re.compile(
    r"^\s*(?:\$|>>>|\.\.\.|%|PS [A-Z]:\\[^>]*>|[\w.-]+@[\w.-]+:\S*[$#])\s+\S"
)
_DIFF: Final = re.compile(r"^(?:\+\+\+ |--- |@@ .* @@|diff --git |index [0-9a-f]+\.\.)")
_LATEX: Final = re.compile(
    r"\\(?:frac|sum|int|begin|end|left|right|mathbf|mathrm|cdot|sqrt|times|alpha|beta)\b"
    r"|\$\$|\\\(|\\\["
)
# the keywords that open a statement of a programming or query language, each with the
# shape that statement takes: a sentence that starts with "for", "let" or "import" does
# not have it ("let me know", "import the file.")
_CODE_START: Final = re.compile(
    r"^\s*(?:(?:async\s+)?def\s+\w+\s*\(|class\s+[A-Z]\w*\s*[(:{]|import\s+[\w.]+"
    r"(?:\s+as\s+\w+)?\s*$|from\s+[\w.]+\s+import\s+[\w*(]"
    r"|return\s*\S*;?$|(?:if|elif|while|for|with|except|try|else|finally)\b[^.!?]*:$"
    r"|(?:const|let|var)\s+\w+\s*=|(?:function|fn|func)\s+\w+\s*\("
    r"|(?:public|private|protected|static)\s+[\w<>\[\]]+\s+\w+\s*[({=;]"
    r"|package\s+[\w.]+;?$|#include\s*[<\"]|#define\s+\w+"
    r"|(?:SELECT|INSERT\s+INTO|DELETE\s+FROM|CREATE\s+(?:TABLE|INDEX)|ALTER\s+TABLE"
    r"|DROP\s+TABLE)\s|UPDATE\s+\w+\s+SET\s|@\w+(?:\(.*\))?$|[}\])];?,?$)"
)
_ASSIGN: Final = re.compile(r"^\s*[\w.\[\]'\"]+\s*(?:[-+*/]?=|:=)\s*\S")
_CALL: Final = re.compile(r"[\w\]]\.?\w{0,60}\([^()]*\)?\s*[;:{]?\s*$|^\s*\w+(?:\.\w+)+\(")
_KEY_VALUE: Final = re.compile(r"^\s*(?:-\s+)?[\"']?[\w.-]+[\"']?\s*:\s*(?:\S.*)?$")
_JSONISH: Final = re.compile(r"^\s*(?:[{\[]\s*(?:$|\")|[}\]],?\s*$|\"[^\"]+\"\s*:)")
_LEAD_IN: Final = re.compile(r":\s*$")
_SYMBOLS: Final = frozenset('{}[]()<>=;|\\`$*^~"')
_WORD: Final = re.compile(r"[A-Za-z][a-z']+")


def symbol_density(line: str) -> float:
    """The share of a line's visible characters that are punctuation prose rarely uses."""
    visible = [c for c in line if not c.isspace()]
    if not visible:
        return 0.0
    return sum(c in _SYMBOLS for c in visible) / len(visible)


def _wordy(line: str) -> float:
    """The share of a line's whitespace-separated pieces that are ordinary words."""
    pieces = line.split()
    if not pieces:
        return 0.0
    return sum(bool(_WORD.fullmatch(p.strip(".,;:!?\"'()"))) for p in pieces) / len(pieces)


def is_code_line(line: str) -> bool:
    """Whether a single line, read alone, is laid out as code, a log, a trace or markup."""
    stripped = line.strip()
    if not stripped:
        return False
    if _TABLE.match(line) or _LOG.match(line) or _TRACE.match(line) or _DIFF.match(line):
        return True
    if _DIAGNOSTIC.match(line):
        return True
    if _MACHINE.search(line) and _wordy(stripped) < 0.8:
        return True
    if _JSONISH.match(line) or _columns(stripped) or _DELIMITED.match(stripped):
        return True
    if stripped.count(" | ") >= 2:
        return True  # a table's row without its outer pipes: "Oscar W | U9 | Moorfield"
    if _csv_row(stripped):
        return True
    gaps = len(_ALIGNED.findall(stripped))
    if gaps >= 2 or (gaps and len(stripped.split()) < 12):
        return True  # "event_state   tinyint   -- 0 active": fields aligned in columns
    if _LATEX.search(line) or _PROMPT.match(line):
        return True
    if _CODE_START.match(line) or (
        len(_ARGUMENT.findall(stripped)) >= 2 and _wordy(stripped) < 0.6
    ):
        return True  # "/ppp aaa set use-radius=yes interim-update=5m": a command's arguments
    if symbol_density(stripped) > 0.12 and _wordy(stripped) < 0.6:
        return True
    if _ASSIGN.match(line) and _wordy(stripped) < 0.6:
        return True
    return bool(_CALL.search(stripped)) and _wordy(stripped) < 0.5


# a command's or a config's argument: a name, "=" with no space around it, a value
_ARGUMENT: Final = re.compile(r"(?<![\w=.-])[A-Za-z][\w.-]{0,60}=[^\s=]+")
# a run of three or more spaces between words: a column layout, which prose never has
_ALIGNED: Final = re.compile(r"\S {3,}\S")
# a delimited row (CSV and kin): three or more fields, one delimiter, no spaces at all —
# prose puts a space after its commas
_DELIMITED: Final = re.compile(r"^[^\s,;|]+([,;|])[^\s,;|]*(?:\1[^\s,;|]*)+$")


def _csv_row(line: str) -> bool:
    """A comma- (or semicolon-) separated row whose fields hold spaces ("ring set std
    4.108,1,86.40", "26NL…;2026-11-03;Veldhoven Cycles;8507600090;4000"): three
    fields or more, a later one a bare number, and never the space prose puts after a comma
    (an amount's thousands commas are not fields: "4,500,000 users"; chat typed without
    that space, "went up to £950,the landlord said …", has no bare number field)."""
    bare = _THOUSANDS.sub("0", line)
    for sep in (",", ";"):
        if bare.count(sep) < 2 or f"{sep} " in bare or bare.endswith(sep):
            continue
        fields = [f.strip() for f in bare.split(sep)]
        if any(_NUMBER_FIELD.fullmatch(f) for f in fields[1:]):
            return True  # "…,1,86.40", "…;2026-11-03;Veldhoven Cycles;…": a row's cells
    return False


_THOUSANDS: Final = re.compile(r"\d{1,3}(?:,\d{3})+(?![\d,])")
_NUMBER_FIELD: Final = re.compile(r"[$€£¥-]?\d+(?:[.,]\d+)?%?")


def _columns(line: str) -> bool:
    """Command output laid out in columns: a header of upper-case names, or a row that is
    mostly values ("reports-51f2-m4wdb 0/1 CrashLoopBackOff 33 41m")."""
    pieces = line.split()
    if len(pieces) >= 3 and all(p.isupper() and p.isalpha() for p in pieces):
        return True
    return len(pieces) >= 4 and _wordy(line) < 0.35


def _indented(line: str) -> bool:
    """Indented as a program's or a message's continuation lines are (two spaces will do:
    "  NA/NaN/Inf in 'y'" under an R error); a nested bullet is not."""
    return (line.startswith("  ") or line.startswith("\t")) and not _BULLET.match(line)


def _structured(line: str) -> bool:
    """A line that belongs to a pasted block when its neighbours do: key: value, JSON,
    indentation, or a bare diff line."""
    return bool(
        _KEY_VALUE.match(line)
        and not line.rstrip().endswith((".", "!", "?"))
        or _JSONISH.match(line)
        or _indented(line)
        or re.match(r"^[+-]\S", line)
    )


def _marks(lines: list[str]) -> list[bool]:
    """Which lines are part of a paste: code lines, and structured lines beside them or in
    a run of three or more (a YAML or JSON block without a single code line)."""
    code = [is_code_line(line) for line in lines]
    shaped = [_structured(line) for line in lines]
    marks = list(code)
    for i in range(len(lines)):
        if marks[i] or not shaped[i]:
            continue
        near = any(code[j] for j in (i - 1, i + 1) if 0 <= j < len(lines))
        run = sum(1 for j in range(max(0, i - 2), min(len(lines), i + 3)) if shaped[j])
        marks[i] = near or run >= 3
    for start, end in _paragraphs(lines):
        if sum(marks[start:end]) < 2:
            continue
        # a paste: what is not a plain sentence, or touches the paste, goes with it
        pasted = marks[start:end]
        for i in range(start, end):
            beside = any(pasted[j - start] for j in (i - 1, i + 1) if start <= j < end)
            marks[i] = marks[i] or beside or not _sentence(lines[i])
    return marks


def _paragraphs(lines: list[str]) -> list[tuple[int, int]]:
    """(start, end) of each run of lines without a blank line."""
    out, start = [], None
    for i, line in enumerate([*lines, ""]):
        if line.strip() and start is None:
            start = i
        elif not line.strip() and start is not None:
            out.append((start, i))
            start = None
    return out


def _sentence(line: str) -> bool:
    """A line that reads as a plain sentence: mostly words, few symbols, several of them."""
    stripped = line.strip()
    return (
        len(stripped.split()) >= 4
        and _wordy(stripped) >= 0.75
        and symbol_density(stripped) < 0.05
        and not _LEAD_IN.search(stripped)
    )


def prose(text: str) -> str:
    """The text with fenced and unfenced pastes, headings and rules removed; the line that
    leads into a paste goes with it. Blank lines keep paragraphs apart."""
    kept: list[str] = []
    lines = text.splitlines()
    fenced = [False] * len(lines)
    inside = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced[i], inside = True, not inside
        else:
            fenced[i] = inside
    # a fence is a boundary of its own: what surrounds a fenced block is read as it is
    marks = _marks(["" if fenced[i] else line for i, line in enumerate(lines)])
    for i, line in enumerate(lines):
        if fenced[i] or marks[i]:
            if kept and _LEAD_IN.search(kept[-1]):
                kept[-1] = _without_lead_in(kept[-1])  # "here's the error:" goes too
            kept.append("")
            continue
        if _HEADING.match(line) or _RULE.match(line):
            kept.append("")
            continue
        kept.append(line)
    return "\n".join(kept)


_LAST_SENTENCE: Final = re.compile(r"(?:^|(?<=[.!?])\s+)[^.!?]*:\s*$")


def _without_lead_in(line: str) -> str:
    """A line without its last sentence, the one that leads into a paste."""
    return _LAST_SENTENCE.sub("", line).rstrip()
