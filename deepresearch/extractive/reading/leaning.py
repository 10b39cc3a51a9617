"""Whether a sentence reads whole on its own. One that opens on a pronoun or a connective, or points back to
a place in the text, leans on the sentence before it and is quoted with it or not at all - unless it leans
in form only (an "it" or a "there" that stands for what follows, a place pointed at inside an aside). One
that opens a section with "This module ..." points at the page's subject. And one that announces a list
("... as follows:") leans on what comes after it: quoted with its list, or alone only when it states
something whole without it. One that sends the reader elsewhere, or says what the page goes on to do, says
nothing of its own and is no quote; nor is a question: it asks, the sentences after it answer. What a page or
a section is - navigation, an FAQ's index, release notes - is told in extractive/reading/pages.py."""

from __future__ import annotations

import re

from deepresearch.extractive.reading.text import STOPWORDS, UNFINISHED, split_sentences

_DANGLING = frozenset(
    (
        "it", "its", "this", "these", "those", "they", "them", "their", "such", "he", "she", "that", "there",
        "both", "either", "neither", "another",
    )
)  # fmt: skip
"""A sentence opening on one of these leans on the one before it."""
# a sentence that opens by linking to the one before ("However, ...", "In this case ...", the "No, ..." that
# answers a question) leans on it too; not "Instead of X, ...", which names what it stands instead of (unless
# X points back: "Instead of that, ..."), nor "Because X, Y", which gives its own reason for its own clause
# ("Because that is what it does." answers the sentence before it; "Because dataclasses use ... they also ..."
# is a whole sentence without its comma)
_CONNECTIVE = re.compile(
    r"^(?:however|and|or|nor|but|yet|thus|therefore|hence|also|otherwise|likewise|similarly|consequently|"
    r"(?:yes|no)(?=[,.;!])|"
    r"instead(?!\s+of\s+(?!(?:this|that|these|those|it|them|doing so)\b))|furthermore|"
    r"moreover|additionally|then|so|in (?:this|that|these|those|such a|such|either|both|other) "
    r"(?:case|cases|way|ways|words|situations?)|"
    r"as a result|this way|that way|for (?:example|instance)|on the other hand|conversely|nevertheless|"
    r"nonetheless|alternatively|accordingly|by contrast|in contrast|in addition(?=,)|as such(?=,)|e\.g(?=\.)|"
    r"because of (?:this|that|these|those|it)|the same(?= )|"  # "The same solution also works for ..."
    r"because\s+(?:that|this|it|they|these|those)\b(?![^,;]*[,;]))\b,?",
    re.IGNORECASE,
)
# ... and so does one that points back to a place anywhere in it ("the above code", "the previous example")
_POINTS_BACK = re.compile(
    r"\b(?:the|this|that) above\b|\babove (?:example|code|snippet)s?\b|\b(?:example|code|snippet)s? above\b|"
    r"\b(?:previous|preceding) (?:example|snippet|paragraph|step|section)s?\b|"
    r"\b(?:shown|described|mentioned|listed|explained|given) above\b|"
    r"\bthe (?:former|latter)\b",  # "With the latter, you can use ...": one of two things said before
    re.IGNORECASE,
)


# judged words after an expletive "it": with "that" or "whether" any of them ("It is likely that ..."); with
# "to" only those that judge an act ("It is possible to ..."): "It is safe to call from any thread" and "It
# is likely to be removed" are said of a function, so "safe" or "likely" before "to" keeps "it" leaning
_JUDGED_ACT = (
    "possible|impossible|necessary|unnecessary|important|advisable|inadvisable|recommended|advised|"
    "suggested|encouraged|discouraged|error|mistake|idea|practice|best|better|wise|unwise|customary|"
    "preferable|essential|crucial|critical|vital|mandatory|legal|illegal|permissible|common|uncommon|usual|"
    "unusual|worth|worthwhile|enough|sufficient|insufficient"
)
_JUDGED = (
    f"{_JUDGED_ACT}|safe|unsafe|easy|easier|hard|harder|difficult|useful|valid|invalid|acceptable|"
    "unacceptable|convenient|helpful|simple|simpler|likely|unlikely|rare|"
    "reasonable|unreasonable|okay|fine|tempting|tricky|dangerous|harmless|practical|impractical|feasible|"
    "infeasible|costly|expensive|wrong|appropriate|inappropriate|desirable|undesirable|sensible|optional|"
    "preferred|noted|assumed|expected|required|guaranteed|known|true|false|certain|clear|obvious|unclear|"
    "worth noting"
)
_EXPLETIVE = re.compile(
    # "It is an error to add types ...", "It is not possible to ...", "It should be noted that ...": the
    # "it" stands for the clause that follows, not for anything said before ...
    r"^(?:it (?:is|was|isn't|wasn't|may be|might be|can be|could be|would be|will be|should be|must be|"
    r"seems|becomes|remains)(?: (?:not|also|often|usually|generally|sometimes|always|still|quite|much|far|"
    r"more|most|less|least|equally|therefore|thus|almost|highly|strongly|very))*"
    r" (?:(?:an?|the) )?(?:(?:good|bad|common|serious|fatal) )?"
    rf"(?:(?:{_JUDGED}) (?:that|whether)|(?:{_JUDGED_ACT}) to (?!(?:the|a|an|this|that|these|those|its|their|"
    r"your|our|all|any|every|each)\b))\b"
    # ... as in "There is no way to ...", "There are two kinds of ...": nothing before is pointed at (but
    # "There is the file that ..." points at a place)
    r"|there (?:is|are|was|were|isn't|aren't|wasn't|weren't|exists?|remains?|may be|might be|can be|"
    r"could be|will be|must be|should be|would be|has been|have been|had been|seems? to be)"
    r" (?!(?:the|this|that|these|those|my|your|our)\b))",
    re.IGNORECASE,
)
# an aside in brackets: what it points at is not needed to read the sentence around it
_ASIDE = re.compile(r"\([^()]*\)")


# a sentence opening on a _DANGLING word that names what it stands for in the words after it does not lean:
# "Both GLOB and LIKE ...", "Either a branch or a commit ...", "Neither the index nor ...", "Those who ..."
_BETWEEN = r"\s+(?:(?!(?:is|are|was|were|can|may|must|will|should|has|have)\b)\S+\s+){1,3}?"  # no verb yet
_NAMED_AFTER = re.compile(
    rf"^\W*(?:both{_BETWEEN}and|either{_BETWEEN}or|neither{_BETWEEN}nor|those\s+who)\s", re.IGNORECASE
)


def _dangling(sentence: str) -> bool:
    """The sentence opens on a word that stands for something said before it."""
    return sentence.split()[0].strip("\"'“(").lower() in _DANGLING and not _NAMED_AFTER.match(sentence)


def leans_back(sentence: str) -> bool:
    """A sentence that leans on the one before it: it opens on a pronoun or a connective, points back, or
    its opening words refer back ("To avoid this, ...", "You can avoid this by ...", "In many cases, this
    can ...")."""
    return (
        _dangling(sentence)
        or bool(_CONNECTIVE.match(sentence))
        or bool(_POINTS_BACK.search(sentence))
        or bool(_EARLY_REFERENCE.match(sentence))
    )


# its opening words refer back: an act done to what was said ("To avoid this, ...", "You can keep it to ..."),
# or a subject after an opening phrase ("In many cases, this can ...", "Easy, this will ...", "In some cases
# this is ...") - not a thing its section or term names ("To use this option, ..." under "--cached:")
_OWN_THING = (
    r"(?!\s+(?:option|flag|setting|directive|command|variable|parameter|value|function|method|module|mode))"
)
_EARLY_REFERENCE = re.compile(
    r"^\W*(?:to|(?:you|we|one)\s+(?:can|could|may|might|should|must|will|would)(?:\s+(?:also|then|just|simply))?)"
    rf"\s+[a-z]+\s+(?:it|them|this|that|these|those)\b{_OWN_THING}"
    rf"|^\W*(?:[A-Za-z]+\s+){{0,3}}[A-Za-z]+,\s+(?:(?:this|that|these|those)(?:{_OWN_THING}\s+[a-z]+)?|they)\s+"
    r"(?:is|are|was|were|can|could|"
    r"will|would|may|might|must|should|has|have|had|does|do|did|means|makes|allows|lets|works|happens)\b"
    r"|^\W*(?:in|on|at|for|with|under|from)\s+(?:[A-Za-z]+\s+){0,2}[A-Za-z]+\s+(?:this|these|those)\s+"
    r"(?:is|are|was|were|can|will|would|may|might|must|should|has|have|means|makes)\b"
    # ... or what follows if it is not done ("If we don't do this, when CMake creates ...", "Without it, ...")
    r"|^\W*(?:if\s+(?:we|you|one|they)\s+(?:do\s+not|don['’]t|did\s+not|didn['’]t)\s+[a-z]+\s+"
    r"(?:this|that|it|so)\b|without\s+(?:this|that|it),)",
    re.IGNORECASE,
)


def stands_alone(sentence: str) -> bool:
    """A sentence that leans back only in form, and reads whole without the one before it: it opens on an
    "it" or a "there" that stands for what follows ("It is an error to ...", "There is no way to ..."), or
    points back only in an aside ("(which is the time it finished in the above example)")."""
    return (
        (not _dangling(sentence) or bool(_EXPLETIVE.match(sentence)))
        and not _CONNECTIVE.match(sentence)
        and not _POINTS_BACK.search(_ASIDE.sub("", sentence))
        and not _EARLY_REFERENCE.match(sentence)
    )


_VERB_AFTER = frozenset(
    ("is", "are", "was", "were", "has", "have", "had", "can", "could", "will", "would", "may", "might",
     "must", "should", "does", "do", "did")
)  # fmt: skip


def points_at_subject(sentence: str) -> bool:
    """ "This module ...", "These directives ...": a demonstrative before a noun (not "This is", "This
    means"), which at a section's start names the page's subject."""
    words = sentence.split()
    if len(words) < 3 or words[0].lower() not in ("this", "these"):
        return False
    second = words[1].lower().strip(",")
    verb = second in _VERB_AFTER or (
        words[0].lower() == "this" and second.endswith("s") and not second.endswith("ss")
    )
    return not verb and bool(re.fullmatch(r"[a-z][a-z-]*", second))


def names_an_entry(sentence: str) -> bool:
    """ "This option ...", "This attribute ...": a demonstrative before one of a page's many entries, which
    names the entry above it, never the page (git-cherry-pick(1)'s "This option determines how the commit
    message will be cleaned up" is about --cleanup, in a passage that opens past the option's name)."""
    words = sentence.lower().split()
    return len(words) > 1 and words[0] in ("this", "these") and words[1].strip(",").rstrip("s") in _ENTRIES


def entry_name(label: str) -> bool:
    """A section label that names one entry - an identifier ("broker_url", "tar.umask", "--cleanup",
    "KeepAlive", gitattributes' "eol"), not a list's heading ("OPTIONS", "Options", "Setting variables")."""
    named = label[:1].islower() or re.search(r"[_.=<-]|[a-z][A-Z]", label)
    return bool(_IDENTIFIER.fullmatch(label)) and bool(named)


_IDENTIFIER = re.compile(r"[\w.<>=\[\]-]+")
_ENTRIES = frozenset(
    ("option", "attribute", "setting", "variable", "parameter", "field", "flag", "value", "form", "list",
     "entry", "key", "hook", "transport", "argument", "macro", "keyword", "switch", "property", "element",
     "mode", "header", "column")
)  # fmt: skip


# a sentence that announces what follows ("The order of merging is:", "... as follows:")
# ... and "The following are platforms on which BIND runs.", "... is summarized in the following list."
FORWARD = re.compile(
    r"(?::|\b(?:the following(?: (?:list|table|example|examples|steps|options|items))?|as follows|below)"
    r"[.:]?)$|^the following (?:is|are)\b[^:]*$",
    re.IGNORECASE,
)
# ... not a statement that names what a later section explains ("... the Python loggers described below.",
# "described in detail below."; with no list after it, it was no quote)
_LATER = re.compile(r"\b(?:described|discussed|explained)(?:\s+\w+){0,2}\s+below\.$", re.IGNORECASE)


def forward(text: str) -> bool:
    """The sentence points at what follows it: a list, a sample (see FORWARD and _LATER)."""
    return FORWARD.search(text) is not None and _LATER.search(text) is None


_PROSE_WORDS = frozenset(("the", "a", "an", "of", "to", "with", "is", "are", "for", "and"))  # no_sample


def announces(text: str) -> bool:
    """A sentence that announces a list or a sample: "The order of merging is:", "... as follows:"."""
    return forward(text) and text[:1].isupper() and len(text.split()) >= 3 and len(text) <= 300


_STATED_WORDS = 8
"""An announcing sentence says something whole alone only when long enough ("Use it like this:" does not)."""
# where an announcing sentence stops short of a statement: "The values are:", "... such as:", "... set:",
# "... a study that said:"; or it names the list it announces ("The following settings are read ...")
_ANNOUNCES_ONLY = re.compile(
    r"\b(?:is|are|was|were|be|include|includes|including|contain|contains|like|as|follows?|following|below|"
    r"example|e\.g\.|i\.e\.|these|those|this|two|three|four|several|ways?|steps?|options?|cases?|values?|"
    r"forms?|kinds?|types?|rules?|namely|set|use|add|run|type|enter|specify|call|do|see|"
    r"says?|said|reads?|states?|wrote|writes?|shows?|shown|prints?|gives?|displays?|outputs?|produces?)$"
    r"|\b(?:the following|following|below|as follows|these|those|listed|here)\b",
    re.IGNORECASE,
)

# ... nor does one that points ahead ("Let's see what happens when ...:") or is a caption ("Example of an
# LRU cache ...:"), or ends on an action without its object ("... by tagging them, then running:")
_NO_STATEMENT = re.compile(r"(?:Let['’]s|Let us|Here|Examples?)\b")
_BARE_ACTION = re.compile(r"(?:,|\b(?:then|by|after|before|when|while|and|or))\s+\w+ing$", re.IGNORECASE)
# ... or one that counts what the list holds ("There are three ways to configure X:"): nothing said without it
_COUNTS_WHAT_FOLLOWS = re.compile(
    r"\b(?:two|three|four|five|six|seven|eight|nine|ten|\d+|several|a few|a number of) (?:\w+ )?"
    r"(?:ways?|steps?|options?|cases?|values?|forms?|kinds?|types?|rules?|methods?|modes?|things?|reasons?|"
    r"choices?|possibilities|approaches|variants?|settings?|parts?|stages?|phases?)\b",
    re.IGNORECASE,
)


def as_statement(intro: str) -> str:
    """An announcing sentence as a statement of its own: its colon made a full stop when the words before it
    say something whole, or "" (the caller checks that it is prose, then shows it with its colon and "…")."""
    last = (split_sentences(intro) or [intro])[-1].rstrip()
    if not last.endswith(":"):
        return ""
    body = last[:-1].rstrip()
    if (
        len(body.split()) < _STATED_WORDS
        or body.endswith((".", "?", "!"))  # a FAQ's question over its answer ("... always modified?:")
        or _NO_STATEMENT.match(body)
        or _BARE_ACTION.search(body)
        or UNFINISHED.search(body)
        or body.split()[-1].lower() in STOPWORDS  # "... depending on the mode, it:", "... initialized from:"
        or _ANNOUNCES_ONLY.search(body)
        or _COUNTS_WHAT_FOLLOWS.search(body)
    ):
        return ""
    return body + "."


def term_line(text: str) -> bool:
    """A definition list's term as the extractor writes it ("--soft:", "git reset [<mode>]:"): short, ending
    with a colon, not a sentence announcing what follows ("The order of merging is:"), nor a history diagram
    flattened to a line ("o--o--O <-- origin ... <-- their branch:"): it would label the quotes after it. Nor
    the rest of a sentence that goes on past a sample ("or:", "or an ssh URL:", "you'll get a list of all
    existing branches:", "... is semantically equivalent to:"): a clause, not a name (git's user manual)."""
    if _DIAGRAM.search(text) or _GOES_ON.match(text) or _ANNOUNCING_END.search(text):
        return False
    name = text.rstrip(":").strip()
    # "Arguments :" names no entry: the section's is kept - but a key in lower case is a name of its own
    # (CMake's presets: "description" under "displayName" had read as a field of it)
    if name.lower() in _FIELDS and not (name.islower() and name.isalpha() and name not in _LOWER_FIELDS):
        return False
    return text.endswith(":") and (
        (len(text) <= 80 and not _clause(text)) or len(text.split()) <= 2 or faq(name)
    )


def faq(name: str) -> bool:
    """An FAQ's question as a definition list's term ("Can I use the same key for multiple zones?", BIND's
    DNSSEC guide): it labels its answer ("Yes and no. ..." had been quoted under the term of the list before).
    Asked once, opening on a capital: not a synopsis's optional parts ("spi_exec ?-count n? ...") nor a
    numbered contents entry. (As a heading it cost held-out Git a gold page: the journal, session 44.)"""
    return name.endswith("?") and name.count("?") == 1 and name[:1].isupper() and 3 <= len(name.split()) <= 25


def _clause(text: str) -> bool:
    """A line that announces what follows rather than naming it: a sentence, one that opens on a name in code
    ("`raw()` supports indexing, so if you need only the first result you can write:") or one that speaks to
    the reader ("- In your settings file, define STATIC_URL, for example:"). As labels of the quotes after
    them, they told a reader that defining STATIC_URL "is grossly inefficient and probably insecure"."""
    item = text[2:] if text.startswith("- ") else text
    after_code = item.split("`", 2)[2] if item.startswith("`") and item.count("`") >= 2 else ""
    # zsh's "CLOBBER (+C, ksh: +C) <D>:", "Concurrent Versioning System (cvs):": names, one plain word at most
    plain = sum(_PLAIN_LOWER.fullmatch(word) is not None for word in item.split())
    return (
        (announces(text) and (plain > 1 or item.split()[0].lower() in STOPWORDS))
        or len(after_code.split()) >= _CLAUSE_WORDS
        or (len(item.split()) > _CLAUSE_WORDS and _ADDRESSED.search(item) is not None)
    )


_CLAUSE_WORDS = 4
_PLAIN_LOWER = re.compile(r"[a-z][a-z'’-]*[,.;:]?")
_ADDRESSED = re.compile(r"\b(?:you|your|we|our)\b", re.IGNORECASE)

_FIELDS = frozenset(
    ("arguments", "argument", "parameters", "parameter", "example", "examples", "translation", "usage",
     "syntax", "description", "returns", "return value", "values", "see also", "for example", "for instance",
     "e.g.", "note", "notes", "grammar", "synopsis", "signature")
)  # fmt: skip
_LOWER_FIELDS = frozenset(("example", "examples", "note", "notes", "translation"))
_DIAGRAM = re.compile(r"<--|-->|\w--\w--\w")  # an arrow, commits drawn with dashes: a diagram, no name
# a clause's opening, lower-case: a conjunction going on from the sentence before the sample, a pronoun or
# a verb with the subject left above ("results in this header being added to the response:")
_GOES_ON = re.compile(
    r"^(?:or|and|but|then|so|else|otherwise|where|which|whereas|while|you|you[’']\w+|we|we[’']\w+|it|they"
    r"|is|are|was|were|results?|returns?|gives?|yields?|becomes?)\b[,:]?"
)
# a clause that stops on a word that takes what follows: "... treated as:", "... using:", "... equivalent to:"
_ANNOUNCING_END = re.compile(
    r"\s(?:as|to|using|with|by|via|from|of|into|like|than|the|a|an|is|are|follows|following|this|these)\s*:$",
    re.IGNORECASE,
)


VERSION_NOTE = re.compile(r"^(?:New|Changed|Added) in version\b|^Version (?:added|changed)\b", re.IGNORECASE)
"""A line of the page's history ("New in version 3.0.18.", "Changed in version 3.2: ..."): no answer."""
_NOTE_ALONE = re.compile(
    r"^(?:(?:New|Changed|Added) in version|Version (?:added|changed)) [\w.\-]+[.:]?$", re.I
)  # the note with nothing after it: apparatus between a sentence and its sample
ADMONITIONS = (
    "warning",
    "note",
    "notes",
    "important",
    "tip",
    "hint",
    "caution",
    "danger",
    "attention",
    "see also",
)
"""An admonition's title: a remark's label, never a term nor a sample."""
_ADMONITION = re.compile(rf"^(?:{'|'.join(ADMONITIONS)}):?$", re.IGNORECASE)


def apparatus(text: str) -> bool:
    """A line of the page's apparatus between a sentence and the sample it announces: an admonition's title
    ("Warning") or a version note ("New in version 3.0.18."). Skipped: the sample after it is still the
    sentence's."""
    return bool(_ADMONITION.match(text.strip()) or _NOTE_ALONE.match(text.strip()))


def no_sample(text: str) -> bool:
    """A line after a sentence that announces a sample, and no sample of it: apparatus, a sentence announcing
    in its turn ("... is logged as follows:"), a capitalised word or two ending on a full stop ("Disabled.";
    not "make clean.") or on a colon (a field's name: FFmpeg's "Examples:"), a table's row of three cells or
    more ("+ | latitude | North"), or prose: four plain words or more, one of them a word no code is made of
    ("A simple case of replacing AddOutputFilterByType" under a term, "To update the index ..., use" were
    shown as code)."""
    words = [w.strip(".,;:") for w in text.split()]
    plain = all(w.isalpha() for w in words)
    short = len(words) <= 3 and text.endswith((".", ":")) and plain and text[:1].isupper()
    prose = len(words) >= 4 and plain and any(w.lower() in _PROSE_WORDS for w in words)
    return apparatus(text) or announces(text) or short or prose or text.count(" | ") >= 2


# a sentence that sends the reader elsewhere says nothing about the subject itself (nor does one that says
# what the page goes on to do: "Here we discuss a few of these.", or a manual page's "Everything below this
# line in this section is selectively included from the git-config(1) documentation.")
_POINTER = re.compile(
    r"^(?:answer:\s*)?(?:see|read|consult|refer to|please (?:see|read|refer)|for (?:more|further|details|"
    r"information|an? (?:overview|introduction|discussion|description))|(?:more|further) (?:info|information|"
    r"details))\b|"
    r"\b(?:is|are) (?:described|documented|explained|discussed|covered) (?:in|on|under|with|elsewhere)\b|"
    r"\b(?:is|are) (?:presented|given|shown|listed) in the (?:next|following|previous) (?:section|chapter)|"
    r"\b(?:sections?|chapters?) that follows? (?:describes?|explains?|shows?|lists?)\b|"
    r"\byou (?:will|can) find (?:a |the )?(?:more )?(?:detailed )?(?:description|details|information)\b|"
    r"\b(?:available (?:as part of|in)|examples? of .{1,80}? in) the (?:[\w-]+ ){0,3}documentation\b|"
    r"\bthis (?:document|page|section|chapter) (?:describes|explains|covers|discusses|shows|lists)\b|"
    r"^(?:this|the (?:following|next)) (?:examples?|tables?|sections?|chapters?)(?:, [^,]+,)? "
    r"(?:shows?|illustrates?|demonstrates?|lists?|describes?|explains?)\b|"
    r"^(?:here |then |now )?we (?:will )?(?:describe|explain|discuss|cover)\b|"
    r"^let(?:'|\u2019)?s (?:take a )?look\b|"
    r"^everything (?:above|below) this line\b|"
    r"\bshould read\b|\bread (?:more )?about\b|\bcome back to this\b",
    re.IGNORECASE,
)


def dangles(sentence: str) -> bool:
    """It opens on a pronoun that stands for something said before it ("This means ...", "These are ..."),
    not in form only ("It is best to ..."); a connective ("Then add ...:", "For example, to ...:") links it to
    what came before but leaves it whole."""
    return _dangling(sentence) and not stands_alone(sentence)


def asks(text: str) -> bool:
    """The text (a sentence, or a list item of several) ends on a question: an FAQ's index entry ("I get some
    compiler warnings when I compile SQLite. Isn't this a problem?"), a question a page goes on to answer
    ("So how does a module get the specific configuration ...?"). Quoted, it answers nothing. Not a
    question mark after a symbol or a space ("written as *?", "WHERE id = ?"), nor a question the sentence
    quotes ("The installer asks 'Do you want to continue?'")."""
    match = _ASKS.search(text)
    if match is None:
        return False
    # a quote that closes after the question mark and opens after a word: the sentence says who asks
    head = text[: match.start(1)]
    opened = max(head.rfind(mark) for mark in _OPENING) if match.group(1).strip(")]") else -1
    return opened <= 0 or not text[:opened].strip() or text[opened - 1] not in " \t"


_ASKS = re.compile(r"[\w)]\?([\"'’”)\]]*)\s*$")
_OPENING = ('"', "'", "‘", "“")


def points_elsewhere(sentence: str) -> bool:
    """The sentence sends the reader elsewhere ("Answer: See MySQL is throwing deadlock errors ..." in an
    FAQ), or says what the page goes on to do (see _POINTER)."""
    return bool(_POINTER.search(sentence))


# a reference page's "Default: KeepAliveTimeout 5" field; not prose ("Default: the value of --jobs.")
DEFAULT_FIELD = re.compile(r"^(?P<field>Default(?: value)?): `?(?P<value>[^`\n]{1,160}?)`?$")
NO_VALUE = re.compile(
    r"^(?:none|n/a|-|—|unset|not set|empty|nothing|no default|the|a|an|if|when|see|depends|varies|same)"
    r"(?![\w/-])|\.$",
    re.IGNORECASE,
)
SAMPLE_MARKS = tuple('=$/<>{}[]"')  # a sample's marks: a line of prose in lower case has none
# a paragraph that names the sample after it as an example ("As usual, the examples show only ...")
NAMES_EXAMPLE = re.compile(r"\b(?:examples?|sample)\b", re.IGNORECASE)
