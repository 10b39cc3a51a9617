"""Text tools for the extractive engine and the citation check: keywords, section passages, BM25F, sentences.

Nothing here generates prose. Extractive mode only selects and quotes text that the run actually fetched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_STOPWORD_TEXT = """
a about above after again against all also an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has
have having he her here hers him his how i if in into is it its itself just me more most much my no nor
not now of off on once only or other our ours out over own same she should so some such than that
the their theirs them then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours yourself vs versus via
per using use used between within without across among whether does do did tell explain describe
compare best good better new still really actually already even ever yet quite rather simply
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_TOKEN = re.compile(r"[a-z0-9_][a-z0-9_\-\+\.#]*[a-z0-9_+#]|[a-z0-9]")
_IDENTIFIER_PARTS = re.compile(r"[._]+")
# a version string splits at its hyphens too ("v2.1-14-g2414721" and "v1.0.4-14-g2414721" share the commit
# "g2414721"); a hyphenated word ("non-fast-forward", "utf-8", "64-bit") stays one term
_VERSION_PARTS = re.compile(r"[-._]+")
# a stopword that names a statement or keyword is a content word there: "the with statement", "for loops"
KEYWORD_NAME = re.compile(
    r"\b(with|for|while|if|try|from|as|is|not|and|or|in|return|import)\s+(?=(?:statements?|keywords?|clauses?|loops?|operators?|blocks?)\b)",
    re.IGNORECASE,
)
# a run of capitalised keywords is one name, its stopwords included: "WITHOUT ROWID", "INSERT OR REPLACE"
KEYWORD_RUN = re.compile(r"\b[A-Z][A-Z_]+(?:\s+[A-Z][A-Z_]+)+\b")
# a command-line option is a name: "-S" and "-G" are what "should I use -S or -G?" asks about (a lone letter
# is no word otherwise), and a common word that stands alone as an option's value right after it is its
# argument: "git merge -s ours", "-X theirs" (not "-G when ...")
_OPTION_VALUES = "ours|theirs|yours|mine|all|both|any|none|each|other|same|own|off"
_COMMAND_OPTION = re.compile(r"(?<![\w-])-([A-Za-z])(?![\w-])(?:[ =]((?i:" + _OPTION_VALUES + r"))\b)?")
_BRACKETED = re.compile(r"\[([A-Za-z][A-Za-z0-9]{0,7})\]")
_CAMEL = re.compile(r"\b[A-Z]?[a-z]+(?:[A-Z][a-z]+)+\b")
_CAMEL_PART = re.compile(r"[A-Z]?[a-z]+")
# the space after a full stop (and the quote or bracket that closes with it: "(CD, email, etc.)." keeps its
# parenthesis, or the sentence would read unbalanced and never be quoted), before a capital, a digit, a quote,
# a bracket or code ("`tests/test_pg_pool.py` makes the race deterministic.": a sentence of its own, cited on
# its own) - not before a citation marker ("etc.) [1].": the marker belongs to the sentence it ends) - or
# before a manual page's name, which opens a sentence in lower case ("postscreen(8) does not inspect ...")
_MAN = r"[a-z][a-z0-9_.+-]*\([1-9][a-z]*\)\s(?=[a-z])"
_SENTENCE_END = re.compile(
    r"(?:(?<=[.!?])|(?<=[.!?][\"')\]])|(?<=[.!?][\"')\]]{2}))[\s\u2424]+(?=[A-Z0-9\"'(`]|\[(?!\d{1,3}\])|"
    + _MAN
    + ")"
)  # \u2424: LINE_BREAK
LINE_BREAK = "\u2424"
"""A sample's line break in the corpus text ("␤"), where a sample is one line: no word to the search, a space
to the sentence rules (search/preformatted.py sample_text writes it, report/render.py shows the lines)."""
SAMPLE_CHARS = 200  # the longest sample quoted with the sentence that announces it
# "am" is the verb only next to "I" ("I am"); elsewhere a name ("git am"), no stopword (wordclasses.named_am)
_FIRST_PERSON = re.compile(r"\b(?:i\s+am|am\s+i)\b")

# "doesn't", "won't": an auxiliary and its negation, no keyword (read apart, "doesn" and "won" were one)
_CONTRACTION = re.compile(r"\b[a-z]+n['’]t\b")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(_CONTRACTION.sub(" ", _FIRST_PERSON.sub("i", text.lower())))


def content_tokens(text: str) -> list[str]:
    """Stemmed content words. An identifier also yields its parts, so "subprocess.run" and
    "functools.lru_cache" match text that names "subprocess", "run", "lru" or "cache" on their own."""
    out: list[str] = [name.lower() for name in KEYWORD_NAME.findall(text)]  # "the with statement"
    out += [w.lower() for run in KEYWORD_RUN.findall(text) for w in run.split() if w.lower() in STOPWORDS]
    out += [f"[{code.lower()}]" for code in _BRACKETED.findall(text)]  # "the [L] flag", "[END]"
    for letter, value in _COMMAND_OPTION.findall(text):
        out += [f"-{letter.lower()}", value.lower()] if value else [f"-{letter.lower()}"]
    for word in _CAMEL.findall(text):  # TimeoutExpired -> timeout, expired
        out += [_stem(part.lower()) for part in _CAMEL_PART.findall(word) if len(part) > 2]
    for tok in tokenize(text):
        tok = tok.strip("_")
        if tok in STOPWORDS or len(tok) <= 1:
            continue
        out.append(_stem(tok))
        if "." in tok or "_" in tok:
            parts = _IDENTIFIER_PARTS.split(tok)
            if "-" in tok and any(c.isdigit() for c in tok):
                parts = list(dict.fromkeys([*parts, *_VERSION_PARTS.split(tok)]))
            out += [_stem(part) for part in parts if len(part) > 1 and part not in STOPWORDS]
    return out


_GRADED = frozenset(
    (
        "old", "large", "small", "fast", "slow", "late", "high", "low", "long", "short", "big", "great",
        "safe", "simple", "easy", "hard", "strong", "weak", "close", "wide", "deep", "cheap", "quick",
    )
)  # fmt: skip
"""Adjectives whose -er and -est forms are the adjective ("an older checkpoint" is an old one). A closed list:
a rule on every -er would make "filter" "filt" and "user" "us". Not "new" (a stopword: "newer" stays a word)
nor "early" (its stem is "ear", as "-ly" goes)."""


def _graded(token: str) -> str | None:
    """The adjective of a comparative or superlative of _GRADED: older, larger (large + r), latest, bigger
    (its consonant doubled), easier (y to i); "hardier" and "widener" are not hard and wide."""
    for suffix in ("est", "er", "st", "r"):
        if not token.endswith(suffix):
            continue
        base = token[: -len(suffix)]
        candidates = [base, base[:-1] + "y" if base.endswith("i") else ""]
        if len(base) > 2 and base[-1] == base[-2]:
            candidates.append(base[:-1])
        for word in candidates:
            # -st and -r only after an adjective's own final e ("large" + "r"), never "fast" - "st"
            if word in _GRADED and (suffix.startswith("e") or word.endswith("e")):
                return word
    return None


def _stem(token: str) -> str:
    """A tiny suffix stripper: enough for overlap scoring, deterministic and dependency-free."""
    if token.endswith(("r", "st")) and (base := _graded(token)) is not None:
        token = base
    for suffix in ("ations", "ation", "nesses", "ness", "ings", "ing", "ies", "es", "ed", "ly", "s"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            return token[: -len(suffix)] + ("y" if suffix == "ies" else "")
    # a final e goes too, so create, creates, created and creating share one stem
    return token[:-1] if token.endswith("e") and len(token) >= 4 else token


_WORD = re.compile(r"[a-z0-9]+")


def plain_words(text: str) -> list[str]:
    """Stemmed content words split at every non-alphanumeric character: "git-gc(1)" and "lang_vacuum" give
    "git", "gc" and "lang", "vacuum" (titles and file names, compared word by word)."""
    words = _WORD.findall(_FIRST_PERSON.sub("i", text.lower()))
    return [_stem(w) for w in words if len(w) > 1 and w not in STOPWORDS]


def keywords(text: str, limit: int = 8) -> list[str]:
    """Distinct content words of a text, in order of first appearance (original spelling)."""
    seen: dict[str, str] = {}
    for tok in tokenize(text):
        if tok in STOPWORDS or len(tok) < 2:
            continue
        seen.setdefault(_stem(tok), tok)
    return list(seen.values())[:limit]


LIST_ITEM = re.compile(r"^(?:[-*+•]|\d{1,2}[.)])\s+")
"""A list item's marker, as the corpus extractor writes it ("- ", "* ", "1. ")."""
_BULLET = re.compile(r"^[-*+•]\s+")  # not a numbered one: "1. Nested substitution:" is zsh's term
UNFINISHED = re.compile(
    r"(?:,|\b(?:that|if|when|whether|where|which|because|to|by|of|with|for|and|or|the|a|an|is|are|then))$"
)
"""Where a sentence its list completes stops: a comma, a word no sentence ends on ("keep in mind that")."""
_CONTINUES = re.compile(r"^(?![-*+] )[a-z`(,;–—]")


def logical_lines(text: str) -> list[str]:
    """Lines, with hard-wrapped prose re-joined: a line that does not end a sentence continues when the
    next one starts in lower case (Markdown and plain-text files wrap paragraphs at ~80 columns)."""
    lines: list[str] = []
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if not line:
            lines.append("")
            continue
        previous = lines[-1] if lines else ""
        if (
            previous
            and previous[-1] not in ".!?:"
            and not previous.startswith("#")
            and _CONTINUES.match(line)
        ):
            lines[-1] = f"{lines[-1]} {line}"
        else:
            lines.append(line)
    return [line for line in lines if line]


def split_sentences(text: str) -> list[str]:
    """Sentences of a text. A line break ends a sentence too (unless the line is wrapped prose): extracted
    pages put headings, list items and paragraphs on their own lines, and a heading must not glue on."""
    sentences: list[str] = []
    for line in logical_lines(text):
        parts = [part.strip() for part in _split_line(line) if part.strip()]
        for part in parts:
            # "name-based vs. IP-based", "e.g. Apache": an abbreviation's full stop ends no sentence - but
            # "etc." or "Ltd." before a capital does ("... on the g object etc. This however ...")
            abbreviation = _ABBREVIATION.search(sentences[-1]) if sentences else None
            # ... nor does a name's initial before the rest of the name ("by Eugene W. Myers in ...")
            named = bool(sentences and _INITIAL.search(sentences[-1]))
            initial = named and part.split()[0].lower() not in STOPWORDS  # "W. The ..." ends one
            if initial or (abbreviation and not (abbreviation.group("end") and part[:1].isupper())):
                joined = f"{sentences[-1]} {part}"
                if joined in line:
                    sentences[-1] = joined
                    continue
            sentences.append(part)
    return sentences


def _split_line(line: str) -> list[str]:
    """A line cut at its sentence ends, never inside a code sample in backticks ("`git log v2.5.. a`")."""
    parts, start = [], 0
    for end in _SENTENCE_END.finditer(line):
        if line.count("`", 0, end.start()) % 2 == 0:
            parts.append(line[start : end.start()])
            start = end.end()
    return [*parts, line[start:]]


_ABBREVIATION = re.compile(
    r"(?i)(?:^|[\s(\[\"'\u201c])"
    r"(?:vs|e\.g|i\.e|a\.k\.a|(?P<end>etc|Inc|Ltd|Corp)|cf|approx|incl|resp|Fig|No|Nr|Mr|Mrs|Dr|St|et al)\.$"
)
# a first name and an initial ("Eugene W."), not a thing and its letter ("Appendix A.", "Option B.")
_INITIAL = re.compile(
    r"(?:^|\s)(?!(?:Appendix|Annex|Figure|Table|Section|Chapter|Part|Step|Option|Type|Class|Level|Plan|Case|"
    r"Phase|Group|Form|Note|Example|Item|Model|Version|Exhibit|Schedule|Grade|Row|Column|Field|List)\b)"
    r"[A-Z][a-z]+ [A-Z]\.$"
)
_HEADING_LINE = re.compile(r"^(#{1,6})\s+(\S.*)$")
_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,})[^`]*$")  # not a sample's code span that opens on three backticks
DEFINITION_LEVEL = 6
"""The heading level of an API or option entry's signature in the corpus text (search/documents.py)."""


@dataclass(frozen=True, slots=True)
class Passage:
    """A piece of a source within one section. ``text`` starts with the section's heading line (as it
    stands in the source) so a passage can be read, and checked, on its own; ``headings`` is the path of
    section titles from the outermost down."""

    headings: tuple[str, ...]
    text: str
    term: str = ""
    """The last term line ("--allow-untrusted:") of its section before it: the label of the description this
    passage opens with, cut from its term by a passage's end (the reader takes it only if it reads as a
    term)."""

    @property
    def heading(self) -> str:
        return self.headings[-1] if self.headings else ""

    @property
    def body(self) -> str:
        return _HEADING_LINE.sub("", self.text, count=1).strip() if self.headings else self.text


def heading_passages(
    text: str, target_chars: int = 800, max_chars: int = 1400, *, whole_lists: bool = True
) -> list[Passage]:
    """Passages cut at the text's Markdown heading lines (the corpus extractor writes HTML, reStructuredText
    and Markdown headings that way), then at paragraph boundaries within a long section; with
    ``whole_lists``, a list stays with the sentence that announces it (see _chunk_paragraphs)."""
    passages: list[Passage] = []
    path: list[tuple[int, str]] = []
    body: list[str] = []
    heading_line = ""

    def flush() -> None:
        section = "\n".join(body).strip()
        if section:
            headings = tuple(title for _, title in path)
            term, listed = "", False
            for chunk in _chunk_paragraphs(section, target_chars, max_chars, whole_lists):
                text = f"{heading_line}\n\n{chunk}" if heading_line else chunk
                # the section's last term labels what the next passage opens with (a description may run on),
                # not past a list that was all of it (Node's "Possible signatures:" over server.listen())
                term = "" if listed and not _BULLET.match(chunk) else term
                passages.append(Passage(headings, text, term))
                term, listed = _handed_on(chunk, term, listed)
        body.clear()

    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced  # a "# comment" inside a Markdown code fence is not a heading
        match = None if fenced else _HEADING_LINE.match(line.strip())
        if match is None:
            body.append(line)
            continue
        flush()
        level, title = len(match.group(1)), match.group(2).strip()
        while path and path[-1][0] >= level:
            path.pop()
        path.append((level, title))
        heading_line = line.strip()
    flush()
    return passages


TERM_CHARS = 80
"""The longest line a section's passages hand on as their term (Passage.term)."""


def _handed_on(chunk: str, term: str, listed: bool) -> tuple[str, bool]:
    """The term a passage hands on, none past a list that was its description, and whether it is a list."""
    blocks = chunk.split("\n\n")
    terms = [i for i, b in enumerate(blocks) if len(b) <= TERM_CHARS and b.endswith(":") and "\n" not in b]
    at = next((i for i in reversed(terms) if not _BULLET.match(blocks[i])), -1)  # "1. Nested ...:" is one
    items = [_BULLET.match(b) is not None for b in blocks[at + 1 :]]
    going = at >= 0 or listed  # a term's description goes on in this passage
    ended = going and items[:1] == [True] and not all(items)
    return ("" if ended else blocks[at] if at >= 0 else term), going and bool(items) and all(items)


def chunk_passages(text: str, target_chars: int = 800, max_chars: int = 1400) -> list[str]:
    """The texts of ``heading_passages``: what screening ranks and the citation check compares against."""
    return [p.text for p in heading_passages(text, target_chars, max_chars)]


def _chunk_paragraphs(text: str, target_chars: int, max_chars: int, whole_lists: bool = True) -> list[str]:
    """Split text into passages on line/paragraph boundaries, ~target_chars each. Line breaks are kept,
    and a blank line between paragraphs stays blank, so sentence splitting still sees the boundaries.

    With ``whole_lists``, a list item stays in the passage of the sentence that announces its list ("You
    can recover from this in one of two ways:") or that its items complete ("If, after scanning the
    directory,") and of the items before it, up to max_chars, when it is no sentence of its own: cut there,
    the announcement says nothing and the items are fragments with no subject (git-am(1)'s "skip the
    current patch ...")."""
    paragraphs = [block.strip() for block in re.split(r"\n\s*\n", text) if block.strip()]
    paragraphs = [
        "\n".join(" ".join(line.split()) for line in p.splitlines() if line.strip()) for p in paragraphs
    ]
    passages: list[str] = []
    current = ""
    announced = False  # the paragraphs since the last that is no list item: an announcement and its items
    for paragraph in paragraphs:
        if len(paragraph) > max_chars:
            announced = False
            if current:
                passages.append(current)
                current = ""
            code = sample_code(paragraph)
            sentences = split_sentences(paragraph) if code is None else _code_pieces(code, target_chars)
            # one sentence per line; a sample's pieces a paragraph each (a line that opens on code continues
            # the line before: logical_lines)
            piece, joint = "", "\n" if code is None else "\n\n"
            for sentence in sentences:
                if piece and len(piece) + len(sentence) + 1 > target_chars:
                    passages.append(piece)
                    piece = ""
                piece = f"{piece}{joint}{sentence}" if piece else sentence
            if piece:
                passages.append(piece[:max_chars])
            continue
        marker = LIST_ITEM.match(paragraph)
        item = marker is not None
        # an item that is a sentence of its own reads as well cut from its list
        listed = (
            whole_lists and announced and marker is not None and not is_statement(paragraph[marker.end() :])
        )
        # ... and a sample stays with the sentence that announces it ("... an announcement saying:"): a
        # Markdown code span, or a page's <pre> lines short enough to be quoted with it (pytest's "... a match
        # keyword parameter to the context-manager ...:" had its sample in the next passage and was quoted
        # without it; a longer sample kept with it only made a passage of two things, session 49)
        if whole_lists and announced and not item:
            short = len(paragraph) <= SAMPLE_CHARS and page_sample(paragraph)
            listed = sample_code(paragraph) is not None or short
        announced = (announced and item) or paragraph.endswith(":") or bool(UNFINISHED.search(paragraph))
        limit = max_chars if listed else target_chars
        if current and len(current) + len(paragraph) + 1 > limit:
            passages.append(current)
            current = ""
        current = f"{current}\n\n{paragraph}" if current else paragraph
    if current:
        passages.append(current)
    return passages


def _code_pieces(code: str, target_chars: int) -> list[str]:
    """A long sample cut at spaces, each piece a code span of its own (cut at its "sentences", the span would
    open in one piece and close in another)."""
    pieces, piece = [], ""
    for word in code.split(" "):
        if piece and len(piece) + len(word) + 1 > target_chars:
            pieces.append(code_span(piece))
            piece = ""
        piece = f"{piece} {word}" if piece else word
    return [*pieces, code_span(piece)] if piece else pieces


PREPOSITIONS = frozenset(("of", "to", "for", "in", "on", "at", "with", "from", "by", "as"))
"""The prepositions a short definition or a list item may not open on (sentences.py, ``list_fragment``)."""
_FINITE_TEXT = (
    "is are was were be been has have had do does did can could should would will may might must not"
)
_FINITE = frozenset(_FINITE_TEXT.split())  # as STOPWORDS: the words a sentence's verb phrase needs


def list_fragment(item: str) -> bool:
    """A list item that completes the sentence announcing its list ("... may not be used:" then "In CHECK
    constraints of a table definition."): opening on a preposition, with no comma, no finite verb a sentence
    would need, and an article only after a preposition (a second noun phrase after the first, "With the
    journal a writer locks ...", is a sentence's subject) - a passage cut after the announcement leaves it
    no sentence ("In WAL mode readers do not block writers." and "By default the server listens ..." are)."""
    words = item.lower().rstrip(".;").split()
    articles = all(
        words[i - 1] in PREPOSITIONS for i, word in enumerate(words) if i and word in ("a", "an", "the")
    )
    return (
        bool(words)
        and words[0] in PREPOSITIONS
        and "," not in item
        and articles
        and not (_FINITE & set(words))
    )


def is_statement(sentence: str, min_words: int = 6) -> bool:
    """A full sentence (not a heading, caption, code line or fragment) of reasonable length."""
    return bool(
        len(sentence.split()) >= min_words and len(sentence) <= 600 and _FULL_SENTENCE.match(sentence.strip())
    )


# a capital first, or a quoted name ("'uncaughtException' is a crude mechanism ...", "`git gc` runs ...")
_FULL_SENTENCE = re.compile(
    r"^(?:[\"'“(]?[A-Z0-9]|[\"'‘“`][^\"'’”`\s][^\"'’”`]{0,40}[\"'’”`]\s|" + _MAN + r").*[.!?][\"')”]?$",
    re.DOTALL,
)


_CODE_CHARS = frozenset("{}[]=%#<>|\\")  # not quotes: prose quotes words
_BRACKETED_NAME = re.compile(r"<[A-Za-z&][\w:.&-]*>|\[[A-Za-z][\w+.-]*\]|\{[a-z][a-z_]*\}|[<>]=(?=v?\d)")


def code_like(text: str) -> bool:
    """A flattened code sample or configuration snippet rather than prose. (Not every sample: a session's
    output names what a question quotes from it, "v1.0.4-14-g2414721", and ranks its page - JOURNAL, 36.)
    A name in brackets ("Arc<T>", "[c++17]", Flask's "{app_variable}"; not "</Directory>") and a version's
    bound (">=7") count once."""
    named = _BRACKETED_NAME.sub("<", text)
    return sum(1 for char in named if char in _CODE_CHARS) > max(3, len(text) // 40)


CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
"""A Markdown code span, fenced by a run of backticks and closed by a run of the same length."""


def code_span(sample: str) -> str:
    """A code sample as a Markdown code span, as the page shows it: without the escape the corpus text puts
    before a comment that opens it (search/documents.py), a backtick in it taking a longer fence."""
    code = sample[1:] if sample.startswith("\\#") else sample
    fence = "`" * (1 + max((len(run) for run in re.findall(r"`+", code)), default=0))
    padded = f" {code} " if code.startswith("`") or code.endswith("`") else code
    return f"{fence}{padded}{fence}"


_SPAN_LINE = re.compile(r"(`+)(?!`)(.*?[^`])\1")


def page_sample(paragraph: str) -> bool:
    """A paragraph that is a page's sample: its `<pre>` lines (LINE_BREAK) or one line of code."""
    return LINE_BREAK in paragraph or code_like(paragraph.strip())


def sample_code(line: str) -> str | None:
    """The code of a line that is one code span and nothing else: a sample, as a Markdown or plain-text
    file writes one on a paragraph of its own (a page's <pre> sample stays a plain line: as a code span it
    cost held-out Git a gold page, bench/quality/JOURNAL.md, session 36)."""
    match = _SPAN_LINE.fullmatch(line.strip())
    if match is None or match.group(1) in match.group(2):
        return None  # "`a` and `b`": prose that names code
    code = match.group(2)
    return code[1:-1] if len(code) > 2 and code[0] == code[-1] == " " else code


_SIGNATURE = re.compile(
    r"^(?:(?:class|exception|abstractmethod|classmethod|staticmethod|awaitable|coroutine)\s+)*"
    r"([A-Za-z_][\w.]*)(\()?"
)  # a name opens with a letter ("2.2. Posix ... close()": none), its bracket at once ("x (default: 3)": none)


def section_label(heading: str) -> str:
    """A heading's short name: an API signature's with "()" ("subprocess.run()"), no colon at its end."""
    heading = " ".join(heading.split()).rstrip(":").rstrip()
    match = _SIGNATURE.match(heading)
    # each part of a dotted name opens with a letter ("A.1.", "v2.4.1"); with its bracket, or dotted
    named = match and all(part[:1].isalpha() or part[:1] == "_" for part in match.group(1).split("."))
    if match and named and (match.group(2) or "." in match.group(1)) and len(heading) > 40:
        return f"{match.group(1)}()" if match.group(2) else match.group(1)
    if match and named and len(heading) > 80 and heading[match.end(1) :].startswith(" (default"):
        return match.group(1)  # postconf(5)'s "smtpd_relay_restrictions (default: permit_mynetworks, ...)"
    return heading if len(heading) <= 80 else heading[:77].rsplit(" ", 1)[0] + "…"
