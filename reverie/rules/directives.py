"""Standing instructions in a user's turn: what the flush never learns from one.

A user turn teaches the user's world and how the user wants to be answered. A standing
order aimed at the agent's *actions* ("always approve…", "from now on, send…", "the
assistant must run…") is neither: stored, it would steer every later session from text
anyone in the conversation could have typed. Decided by grammar, in three steps:

1. the frame — a clause with no subject of its own (a bare verb after ``always``,
   ``never``, ``don't``, or after a standing lead-in such as "from now on", "going
   forward", "whenever …,", a "Rule:" / "Lesson:" / "Remember:" label), or a deontic
   modal whose subject is the agent ("you must", "the assistant should");
2. the verb — allowed when it words, answers or addresses ("reply", "explain", "call me",
   "ask me first"), or presents the reply and its object is the reply's form ("use metric
   units", "keep answers short"); anything else is an action;
3. the world — an order that comes with a reason about the world ("never push to main —
   branch protection blocks it") states how things are, unless it drops a safeguard
   ("without review").

A clause with a subject of its own ("we always deploy on Fridays", "the CI always runs
lint first") is knowledge, and a bare verb without a standing marker ("run make test
before pushing") is a one-off request or a how-to — both stay learnable.
"""

from __future__ import annotations

import re
from typing import Final

from reverie.rules.injection import instruction_kind, readings

STANDING_ORDER: Final = "standing-order"
SUPPRESSION: Final = "suppression"

_AGENT: Final = r"(?:you|u|the (?:assistant|ai|agent|bot|model|llm)|assistant|ai|agent)"
_DEONTIC: Final = (
    r"must|should|shall|need to|needs to|have to|has to|are to|is to|ought to|had better"
    r"|'d better|are (?:required|expected|supposed) to|is (?:required|expected|supposed) to"
)
_ADVERBS: Final = (
    r"(?P<adv>(?:(?:always|never|not|also|just|now|only|automatically|immediately|still"
    r"|ever|from now on|henceforth|please)\s+)*)"
)
_VERB: Final = r"(?P<verb>[a-z][a-z-]*)(?P<tail>.*)"
_BY_AGENT: Final = re.compile(
    rf"^{_AGENT}(?:\s+|(?='))(?P<modal>{_DEONTIC}|will|'ll|can|may)\s+{_ADVERBS}{_VERB}", re.S
)
_BARE: Final = re.compile(
    r"^(?P<adv>(?:(?:always|never|never ever|don't|dont|do not|don't ever|do not ever"
    r"|make sure to|make sure you|be sure to|remember to|don't forget to|do not forget to"
    r"|please|also|just)\s+)*)" + _VERB,
    re.S,
)
# lead-ins that make what follows standing; a label counts when it names a standing rule
_LABEL: Final = re.compile(r"^(?P<label>(?:[\w'-]+ ){0,5}[\w'-]+)\s*:\s+")
_STANDING_LABEL: Final = re.compile(
    r"\b(?:rules?|lessons?|notes?|remember|reminders?|important|policy|polic(?:y|ies)|orders?"
    r"|takeaways?|tips?|principles?|guidelines?|instructions?|directives?|always|never"
    r"|updates?|memo|ps|fyi|key points?|from now on|going forward|heads up)\b"
)
_FILLER: Final = re.compile(
    r"^(?:please|pls|plz|kindly|also|and|so|then|ok|okay|oh|btw|now)\b,?\s+"
)
_LEAD: Final = re.compile(
    r"^(?:(?:from now on|going forward|henceforth|hereafter|from here on(?: out| in)?"
    r"|from this point (?:on|forward)|in (?:the )?future|starting (?:now|today|immediately)"
    r"|for the rest of (?:this|the|our) \w+|at all times"
    r"|(?:every|each|any) ?time\b[^,]{0,80}|whenever\b[^,]{0,80}"
    r"|in (?:every|each|all) (?:answers?|repl(?:y|ies)|responses?|messages?|sessions?))"
    r"\s*,?\s+|remember(?: this| that)?\s*,\s+)"
)
# a marker that ends the clause ("answer in German from now on"); "always" and "never"
# count only where they modify the verb, "whenever …" and "in future" only as lead-ins
_STANDING: Final = re.compile(
    r"\b(?:from now on|going forward|henceforth|hereafter|from here on(?: out| in)?"
    r"|from this point (?:on|forward)|at all times|starting (?:now|today)"
    r"|for the rest of (?:this|the|our) \w+)\W*$"
)
# words that open a subject (or a subordinate clause), never an imperative
_NOT_A_VERB: Final = frozenset(
    "i we they he she it you my our your their his her its the a an this that these those"
    " there here everyone everybody nobody someone somebody people all each every some any"
    " no one both what which who whom whose when where why how if as because since though"
    " although while unless until before after to for in on at by with from of about into"
    " over under than then so but or and nor yet once".split()
)
# verbs of wording, answering and addressing
_SPEECH: Final = frozenset(
    "reply respond answer speak talk phrase word spell format explain summarise summarize"
    " describe define translate cite paraphrase elaborate clarify be sound converse chat"
    " communicate express greet".split()
)
_ADDRESSING: Final = frozenset(
    "ask tell let warn notify remind inform check confirm ping message update call address"
    " consult alert".split()
)
# verbs that put information into the answer (allowed unless negated: "never mention the
# warnings" hides something), and those that do so only when the answer is named ("give
# distances in km", "include versions when I ask")
_TELLING: Final = frozenset(
    "mention highlight suggest recommend note cite compare emphasise emphasize summarise"
    " summarize outline elaborate detail point flag".split()
)
_IN_ANSWER: Final = frozenset(
    "include provide give offer add show list report confirm verify double-check prioritise"
    " prioritize state specify clarify combine tailor adapt frame".split()
)
_ASKED: Final = re.compile(
    r"\b(?:when(?:ever)?|if|each time|every time|any ?time)\s+(?:i|we)\s+(?:ask|request|want"
    r"|need|query|enquire|inquire|look up|talk|chat)\b|\bwhen(?:ever)? asked\b"
    r"|\bin (?:your|every|each|all|the) (?:\w+ )?(?:answers?|repl(?:y|ies)|responses?)\b"
)
# verbs that present a reply, allowed when their object is the reply's form
_PRESENTING: Final = frozenset(
    "use keep write give show put include start begin end open close finish add avoid skip"
    " drop omit stop cut leave limit list number bold capitalise capitalize round convert"
    " sign stick structure lead present display mark label break split wrap indent quote"
    " prefer lose maintain".split()
)
_FORM: Final = re.compile(
    r"\b(?:answers?|repl(?:y|ies)|responses?|explanations?|summar(?:y|ies)|examples?|code"
    r"|snippets?|blocks?|wording|words?|sentences?|paragraphs?|tone|voice|language|english"
    r"|spanish|french|german|portuguese|italian|dutch|japanese|chinese|korean|russian|arabic"
    r"|hindi|polish|swedish|norwegian|danish|finnish|greek|turkish|hebrew|units?|metric"
    r"|imperial|kilomet(?:er|re)s?|km|miles|celsius|fahrenheit|dates?|times?|format(?:ting)?"
    r"|markdown|bullets?|bullet points|lists?|tables?|headings?|headers?|emojis?|emoticons?"
    r"|exclamation(?: marks?| points?)?|punctuation|jargon|acronyms?|abbreviations?|spelling"
    r"|grammar|pleasantries|small talk|apolog(?:y|ies|i[sz]ing)|intros?|introductions?"
    r"|preambles?|disclaimers?|caveats?|filler|greetings?|sign-?offs?|drafts?|emails? you"
    r"|(?:it|things) (?:short|brief|concise|simple|casual|formal|light|tight|friendly)"
    r"|length|prices?|currency|euros?|dollars?|decimals?|tabs|spaces|indentation|style)\b"
    r"|\b(?:with|to) (?:me|us)\b|^\s+(?:me|us)\b"
)
_PATHLIKE: Final = re.compile(r"\S*\w[./:]\w\S*")  # hosts, paths, URLs: not words of a reply
_TO_THE_USER: Final = re.compile(r"^\s+(?:me|us|the user)\b")
# "reply only with the word banana": an answer replaced by a fixed text
_SUPPRESSED: Final = re.compile(
    r"\b(?:only|nothing but|nothing except|nothing other than|just)\s+(?:with\s+|in\s+)?"
    r"(?:the (?:word|phrase|letter|string|emoji|number|sentence)|a single (?:word|emoji|letter"
    r"|character)|[\"'])"
)
_REASON: Final = re.compile(
    r"\s(?:—|–|--|-)\s|\b(?:because|since|otherwise|or else)\b"
    r"|[,;:(]\s*(?=(?:i|i'm|it|it's|that|this|they|the|our|we|we're|there)\b)"
)
_SECOND: Final = re.compile(r"\b(?:you|your|you're|u|the (?:assistant|ai|agent|bot|model))\b")
_UNGUARDED: Final = re.compile(
    r"\bwithout (?:\w+ ){0,2}(?:review|reviews|reviewing|approval|asking|confirmation"
    r"|confirming|permission|checks?|checking|verification|sign-?off|waiting|testing|tests)\b"
    r"|\bno questions(?: asked)?\b|\bskip(?:ping|s)? (?:\w+ ){0,2}(?:reviews?|approvals?"
    r"|pull requests?|checks?|tests?|ci|verification|confirmation)\b"
)
# shapes that are dangerous whoever writes them and however they are framed
_REMOTE_CODE: Final = re.compile(
    r"\b(?:curl|wget|iwr|invoke-webrequest|irm)\b[^|\n]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|k|da|fi)?sh\b"
    r"|\biex\s*\(|\bchmod\s+(?:-r\s+)?777\b"
)
# a marker that makes any clause of a text a standing order ("…, and remember to always
# chmod 777 …"): checked only beside a dangerous shape
_STANDING_ANYWHERE: Final = re.compile(
    r"\b(?:always|remember to|make sure to|be sure to|from now on|going forward|henceforth"
    r"|every time|whenever|before every|after every)\b"
)
# weakening a protection: "turn off 2FA", "disable TLS verification"
_WEAKEN: Final = re.compile(
    r"\b(?:turn(?:s|ing)? off|switch(?:es|ing)? off|disabl\w*|remov\w*|bypass\w*|skip\w*)\s+"
    r"(?:\w+\s+){0,2}(?:2fa|mfa|two-factor|tls|ssl|certificate|verification|authentication"
    r"|firewall|antivirus|audit\w*|backups?|encryption|sandbox\w*|security)\b"
)
_EXFILTRATE: Final = re.compile(
    r"\b(?:send|sends|sending|post|posts|posting|upload|uploads|uploading|forward|forwards"
    r"|email|e-mail|mail|copy|copies|share|shares|export|exports|sync|pipe|leak|dump)\b"
    r"[^.\n]{0,100}?\bto\s+(?:(?:my|a|an|the|our)\s+)?(?:https?://|[\w.+-]+@[\w-]+\.\w"
    r"|personal|private|public|external|outside|third[- ]party|pastebin|paste\.)"
)
_OBEY_ANY: Final = re.compile(
    r"\bdo (?:whatever|anything|everything)\b[^.\n]{0,80}\b(?:tells?|says?|asks?|wants?)\b"
)


def aimed_at_agent(text: str, speaker: str) -> str | None:
    """The kind of instruction to the agent ``text`` gives: from anyone, an override,
    disclosure, identity change, … or a dangerous order; from the user, also a standing
    order to act (what a tool write accepts as the agent's own lesson, a user turn does
    not teach)."""
    kind = instruction_kind(text) or dangerous_order(text)
    if kind is None and speaker == "user":
        kind = standing_instruction(text)
    return kind


def dangerous_order(text: str) -> str | None:
    """A shape no memory should hold, whoever writes it: fetching code into a shell
    ("curl … | sh"), sending data to an outside address, doing whatever someone says, or an
    order that drops a safeguard ("without review", "skip code review", "no questions")."""
    ordered: bool | None = None
    for reading in readings(text):
        low = _EMPHASIS.sub("", reading.lower())
        if _OBEY_ANY.search(low):
            return "obey"
        kind = (
            "remote-code"
            if _REMOTE_CODE.search(low)
            else "exfiltration"
            if _EXFILTRATE.search(low)
            else "drops-safeguard"
            if _UNGUARDED.search(low) or _WEAKEN.search(low)
            else None
        )
        if kind is None:
            continue
        if ordered is None:  # a statement of how things are ("we send the report to …")
            ordered = (
                _STANDING_ANYWHERE.search(low) is not None
                or standing_instruction(text) is not None
                or addresses_agent(text)
            )
        if ordered:
            return kind
    return None


_EMPHASIS: Final = re.compile(r"[*_]{1,3}(?=\S)|(?<=\S)[*_]{1,3}")
_AUTHORITY: Final = re.compile(
    r"\b(?:admin|administrator|owner|root|boss|manager|management|security)\b"
)
# a subject's relation to its value: what a labelled statement has and an order lacks
_RELATION: Final = re.compile(
    r"^(?:[\w'./#@-]+\s+){0,6}?(?:(?:is|are|was|were|now|moved|changed|dropped|rose"
    r"|increased|decreased|went|got|became|stays?)\b|(?:->|→|=>|=)\s)"
)
_CONDITION: Final = re.compile(r"^(?:if|when|once|before|after|on|for|during)\b[^,]{1,80},\s*")
_CLAUSES: Final = re.compile(r"(?<=[.!;])\s+|\n+")


def standing_instruction(text: str) -> str | None:
    """``standing-order`` when ``text`` (a user's words) orders the agent to act, now and
    later, beyond how it words its replies; ``suppression`` when it replaces every answer
    with a fixed text; ``None`` for knowledge, a preference about the reply's form, a
    question, a one-off request or a how-to."""
    for reading in readings(text):
        for clause in _CLAUSES.split(_EMPHASIS.sub("", reading)):
            kind = _clause_kind(clause.strip().lower())
            if kind is not None:
                return kind
    return None


# the agent named as who the statement is for or about: "you", "your", "the assistant"
_ADDRESSEE: Final = re.compile(
    r"\b(?:you|your|yours|yourself|you're|youre|you'll|you've|you'd|u|ur"
    r"|(?:the|our|my) (?:assistant|ai|agent|bot|chatbot|model|llm|copilot))\b"
)
# discourse that names "you" without addressing an order to the agent
_COURTESY: Final = re.compile(
    r"\b(?:thank(?:s| you| u| ya)(?: to you)?|you(?:'re| are| were) right|you know|see you"
    r"|if you ask me|as you (?:know|said|suggested)|like you said|you see|mind you)\b"
)
_TOLD: Final = re.compile(
    r"^(?:you should know|you (?:might|may) want to know|(?:just )?so you know|you know|fyi)"
    r"(?: that)?\s*,?\s*"
)
_NAMING: Final = re.compile(r"\b(?:your name is|call you|you(?:'re| are) called)\s+[\w'-]+")


def addresses_agent(text: str) -> bool:
    """Whether a user's statement is aimed at the agent ("I prefer that you run…", "our API
    is on 8443, and you should disable TLS", "… by the assistant"): such a statement is not
    knowledge of the user's world, so the flush leaves it in the log. A preference about the
    reply's form, naming the agent and courtesy ("thank you", "you're right") are not."""
    for reading in readings(text):
        low = _NAMING.sub(" ", _COURTESY.sub(" ", _TOLD.sub("", reading.lower())))
        if not _ADDRESSEE.search(low):
            continue
        if any(_reply_form(c.strip()) for c in _CLAUSES.split(low) if _ADDRESSEE.search(c)):
            continue
        return True
    return False


def _reply_form(clause: str) -> bool:
    """A clause naming the agent only to say how to word replies ("you can skip the
    pleasantries with me", "keep your answers short")."""
    rest = re.sub(rf"^.*?\b{_AGENT}\b\s*(?:{_DEONTIC}|will|'ll|can|may|could)?\s*", "", clause)
    bare = _BARE.match(rest)
    if bare is not None and _worded(bare.group("verb"), bare.group("tail"), negated=False):
        return True
    return bool(_FORM.search(clause)) and not _ACTION_OBJECT.search(clause)


_ACTION_OBJECT: Final = re.compile(
    r"\b(?:run|send|post|upload|export|delete|remove|disable|enable|install|deploy|push|merge"
    r"|approve|grant|share|forward|execute|obey|bypass|skip|ignore|reveal|print|leak)\b"
)


def _lead_in(clause: str) -> tuple[str, bool, bool]:
    """The clause without its lead-ins, whether one of them made it standing, and whether
    that was only a label ("note:", "update:")."""
    standing = labelled = False
    while True:
        label = _LABEL.match(clause)
        if label is not None and _STANDING_LABEL.search(label.group("label")):
            clause, labelled = clause[label.end() :], True
            continue
        filler = _FILLER.match(clause) or _CONDITION.match(clause)
        if filler is not None:  # a condition alone does not make an order standing
            clause = clause[filler.end() :]
            continue
        lead = _LEAD.match(clause)
        if lead is None or not lead.group().strip(" ,"):
            return clause, standing or labelled, labelled and not standing
        clause, standing = clause[lead.end() :], True


def _clause_kind(clause: str) -> str | None:
    clause = _TOLD.sub("", clause)  # "you should know that the db resets…" states a fact
    if not clause or clause.rstrip(" \"')").endswith("?"):
        return None
    standing = bool(_STANDING.search(clause))
    rest, led, label_only = _lead_in(clause)
    by_agent = _BY_AGENT.match(rest)
    if by_agent is None and label_only and not standing and _RELATION.search(rest):
        return None  # "note: redis ttl -> 5 minutes": a labelled statement, not an order
    if by_agent is not None:
        modal, adverbs = by_agent.group("modal"), by_agent.group("adv")
        always = re.search(r"\b(?:always|never)\b", adverbs)
        if modal in {"will", "'ll", "can", "may"} and not (standing or led or always):
            return None  # a prediction or a possibility, not an order
    else:
        by_agent = _BARE.match(rest)
        if by_agent is None:
            return None
        adverbs = by_agent.group("adv")
        if not (standing or led or re.search(r"\b(?:always|never|don't|dont|not)\b", adverbs)):
            return None  # a one-off request or a how-to
        if not _imperative(by_agent.group("verb")):
            return None
    verb, tail = by_agent.group("verb"), by_agent.group("tail")
    negated = bool(re.search(r"\b(?:never|not|don't|dont)\b", adverbs))
    if _SUPPRESSED.search(tail):
        return SUPPRESSION
    if _worded(verb, tail, negated=negated):
        return None
    return None if _explained(tail) else STANDING_ORDER


def _imperative(word: str) -> bool:
    """Whether ``word`` can be a bare verb: not a word that opens a subject, and not
    inflected (a plural noun or a third-person verb: "deploys never go out"; a past
    tense: "included the notes")."""
    if word in _NOT_A_VERB:
        return False
    if word.endswith("ed") and not word.endswith("eed") and len(word) >= 6:
        return False
    return not (word.endswith("s") and not word.endswith(("ss", "us", "is")))


def _worded(verb: str, tail: str, *, negated: bool) -> bool:
    """Whether the ordered act is how the agent words, answers or addresses."""
    if verb in _SPEECH or (verb == "sign" and tail.startswith(" off")):
        return True
    if verb in _ADDRESSING and _TO_THE_USER.match(tail):
        return not negated
    if verb in _TELLING or (verb in _IN_ANSWER and _ASKED.search(tail)):
        return not negated
    return verb in _PRESENTING and bool(_FORM.search(_PATHLIKE.sub(" ", tail)))


def _explained(tail: str) -> bool:
    """Whether the order comes with a reason about the world (not about the agent, not a
    claim of authority) and keeps its safeguards: then it states how things are."""
    found = _REASON.search(tail)
    if found is None or _UNGUARDED.search(tail):
        return False
    reason = tail[found.end() :]
    return bool(reason.strip()) and not _SECOND.search(reason) and not _AUTHORITY.search(reason)


__all__ = [
    "STANDING_ORDER",
    "SUPPRESSION",
    "addresses_agent",
    "aimed_at_agent",
    "dangerous_order",
    "standing_instruction",
]
