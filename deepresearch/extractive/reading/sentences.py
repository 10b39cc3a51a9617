"""Choosing sentences to quote: whole statements with their subject, scored for a sub-question, picked with
maximal marginal relevance (MMR) so a digest covers different claims from different sources.

A quotable unit is one sentence of a source, or two consecutive ones when the second leans on the first
("It ...", "This ...", "They ..."): never a fragment, never a sentence that starts with "(" or a pronoun
without its antecedent. When the section's heading names the subject (an API entry's signature, a glossary
term, a how-to title), the unit carries it as ``section``, which the report prints before the quote."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from deepresearch.extractive.asking.verbclues import names_the_counted, subjectless, verb_of_subject
from deepresearch.extractive.reading.leaning import (
    ADMONITIONS,
    DEFAULT_FIELD,
    NAMES_EXAMPLE,
    NO_VALUE,
    SAMPLE_MARKS,
    VERSION_NOTE,
    announces,
    apparatus,
    as_statement,
    asks,
    dangles,
    entry_name,
    forward,
    leans_back,
    names_an_entry,
    no_sample,
    points_at_subject,
    points_elsewhere,
    stands_alone,
    term_line,
)
from deepresearch.extractive.reading.pages import navigation, question_index, section_name, table_row
from deepresearch.extractive.reading.text import (
    DEFINITION_LEVEL,
    LINE_BREAK,
    LIST_ITEM,
    PREPOSITIONS,
    SAMPLE_CHARS,
    UNFINISHED,
    code_like,
    code_span,
    content_tokens,
    is_statement,
    list_fragment,
    logical_lines,
    page_sample,
    sample_code,
    section_label,
    split_sentences,
)

# a statement's end (at a line's end: prose puts a semicolon inside its lines), a block, an assignment, a
# pointer, a line that opens on a call with arguments (CMake's "CACHE )␤set(LIB_INSTALL_DIR lib/ ..."): a
# sentence across a sample's lines that has one is code cut at a full stop, not prose
_CODE_LINE = re.compile(rf";\s*(?:{LINE_BREAK}|$)|[{{}}=]|->|{LINE_BREAK}\s*[\w.]+\([A-Za-z_$]")
_EDITORS_NOTE = re.compile(r"\[[A-Za-z][^\]]*\s[^\]]*\]")  # a line of words in brackets, not "[a-z]"
_HEADING_LINE = re.compile(r"^#{1,6}\s+(\S.*)$")
_API_HEADING = re.compile(r"(?:class|event|interface)\s*:\s|[\w.$]+\(", re.IGNORECASE)  # or "fs.mkdir("


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# ... not one that opens on punctuation, but one that opens on a name as code does ("`git gc` runs ...") or
# on a quoted word ('"Yield" fixtures yield instead of return.')
_NOT_PROSE = re.compile(r"https?://|>>>|\$ |\{\s*$|^(?!`|[\"“‘']\w)\W|\s[=:]{2}\s|\w\(.*\)\s*\w+\(|-{8}|={8}")
NEAR_DUPLICATE = 0.7
"""Jaccard similarity of content words at which two sentences say the same thing."""


@dataclass(frozen=True, slots=True)
class Quote:
    """A quotable unit of one source: the verbatim text and where it stands."""

    text: str
    n: int
    section: str
    position: int  # index of the unit within its passage (0 = the section's first statement)
    terms: frozenset[str]
    subject: str = ""  # the first content word, stemmed: what the sentence is about


# a list item that defines a name of at most four words: "sqlite3_step() → Advance ...", "TERM: Definition."
_DEFINITION_ITEM = re.compile(
    r"^(?P<term>[^\s→—–:]{1,60}(?: [^\s→—–:]+){0,3}) ?(?:→|—|–|:| -) (?P<text>[A-Z].*)$"
)
# ... but "Note: ...", "Step 1: ..." are remarks and steps under the section's own heading
_NOT_NAMES = _words("example examples step") | {word for title in ADMONITIONS for word in title.split()}
# a short line under a term that opens on one of these is a label or a remark, not what the term does
_DETERMINERS = _words(
    "the a an this that these those its their each every some any all no one both either neither such other"
)
_BARE = re.compile(r"(?:This|It) ")  # a pronoun that opens a definition: its term
_OWN_PLACE = re.compile(r"(?:This|These) (?:section|subsection|chapter)s?\b")  # "This section is for ..."
_EXAMPLE = re.compile(r"(?:examples?|samples?)(?:\s+\d+)?\s*:?$", re.IGNORECASE)  # a section "Example 1"
_OPTION_ROW = re.compile(r"\|\s*(?P<name>-{1,2}\w[\w-]*(?:[ =,][^|]{0,40})?)\s*\|\s*(?P<text>[^|]{20,})\|?")
_FIELD_WORDS = 3  # "Return type :", "Default value:": a field's name, not a sentence announcing a sample
_TYPE_VALUE = re.compile(r"^[A-Za-z_][\w.]*(?:\[[\w\[\]., …]*\])?$")  # "None", "Optional[str]", "IO"
MAX_LIST_ITEMS = 8
MAX_UNIT_CHARS = 600
STATEMENT_MIN_WORDS = 6
TERM_MIN_WORDS = 4
"""A quotable sentence has STATEMENT_MIN_WORDS words, or TERM_MIN_WORDS under a definition list's term."""


@dataclass(slots=True)
class _Reader:
    """Walks a passage's lines and collects its quotable units (see ``quotes``)."""

    n: int
    label: str
    units: list[Quote]
    subject: str = ""  # the page's own heading: what "This module ..." at a section's start means
    term: str = ""  # a definition list's current term ("--soft:"), the label of what follows it
    intro: str = ""  # a sentence that announces a list or a sample ("The order of merging is:")
    unfinished: bool = False  # ... or one that its list's items complete ("When enabled, keep in mind that")
    items: list[str] | None = None
    previous: tuple[str, ...] = ()  # the last two sentences read, for one that opens with "It", "This"
    aside: str = ""  # an intro whose sample waits past an admonition's title and its body
    follows_prose: bool = False  # the last line read was prose, and not on the sample before it
    after_sample: bool = False  # the last line read was a sample ("These lines are examples of ...": of it)
    term_list: tuple[str, ...] = ()  # the last item of a list that is all of a term's description so far
    hanging: str = ""  # a sentence that stops short of its sample ("A directive of the form"), then ...
    around: str = ""  # ... with it, waiting for its rest in lower case ("specifies that ...")
    after: str = ""  # the passage's next paragraph: a sample announced by this one's last sentence (see line)

    def add(self, text: str, label: str = "") -> None:
        # a remark under an admonition's title (Doxygen's "Warning:") is its section's, not labelled "Warning"
        label = label or (self.term if not apparatus(f"{self.term}:") else "") or self.label
        tokens = content_tokens(text)
        self.units.append(
            Quote(text, self.n, label, len(self.units), frozenset(tokens), tokens[0] if tokens else "")
        )

    def sentence(self, sentence: str) -> None:
        previous, self.previous = self.previous, (*self.previous[-1:], sentence)
        # a question is read (a sentence after it may lean on it), but is no quote
        quotable = _prose(sentence) or self._short_definition(sentence) or self._lower(sentence, previous)
        quotable = quotable or _step(sentence, previous)  # a step: "Then, edit the zone file."
        if not quotable or forward(sentence) or asks(sentence):
            return
        if LINE_BREAK in sentence and _CODE_LINE.search(sentence):
            return  # a long sample's lines cut as sentences ("1 : 0);␤array->clear = (clear ?")
        # "This option ...": the entry its section is named after, never the page
        subject = self.subject
        if names_an_entry(sentence) and subject != self.label:  # (an entry's heading is its subject)
            subject = (self.label if entry_name(self.label) else "") if self.label else self._entry_page()
        subject = self.label if self.label and _OWN_PLACE.match(sentence) else subject  # not the page's
        # a section opening "This module implements ..." points at the page's subject: named as label; a
        # definition's "This form is to view ...", and its first "This will ..." or "It ...", at its term
        bare = self._names_a_thing() and _BARE.match(sentence)
        if not previous and (self.term or subject) and (points_at_subject(sentence) or bare):
            self.add(sentence, self.term or subject)
            return
        if leans_back(sentence) or (previous and names_the_counted(previous[-1], sentence)):
            # quoted with the sentences it leans on, back to one that names its subject (at most two)
            chain = [sentence]
            for before in reversed(previous):
                if not (_prose(before) or self._short_definition(before)):
                    break  # its antecedent is not quotable: leave it out rather than quote a fragment
                chain.insert(0, before)
                if not leans_back(before):
                    self._lean(chain)
                    return
            # ... unless it leans back in form only ("It is an error to ...", the first of its section)
            if stands_alone(sentence) and not self._needs_subject(sentence):
                self.add(sentence)
        elif not self._needs_subject(sentence):
            self.add(sentence)
        elif self._entry_page():  # CMake's variable pages: "Specifies the build type ..." under its name
            self.add(sentence, self._entry_page())

    def _needs_subject(self, sentence: str) -> bool:
        """ "Returns the ..." is quoted only under a heading or a term that names its subject."""
        return not (self.term or self.label) and subjectless(sentence)

    def _entry_page(self) -> str:
        """The page's name when the page is one entry's ("CMAKE_BUILD_TYPE") and no section names another."""
        return self.subject if not (self.term or self.label) and entry_name(self.subject) else ""

    def _short_definition(self, sentence: str) -> bool:
        """A definition under its term says what it does in few words ("store:" then "Store credentials
        indefinitely on disk."): the term is its subject, so a short sentence that opens on its verb is a
        full one there - not a bare noun phrase ("The prepared statement object.", "Path to the output
        file.") nor a remark under "Note:" or "Example:"."""
        words = sentence.lower().split()
        return (
            self._names_a_thing()
            and len(words) > 1
            and words[0] not in _DETERMINERS
            and words[1] not in PREPOSITIONS
            and _prose(sentence, TERM_MIN_WORDS)
        )

    def _names_a_thing(self) -> bool:
        """The term the reader is under names a thing, not a remark or a step ("Note:", "Step 1:")."""
        return bool(self.term) and self.term.split()[0].lower() not in _NOT_NAMES

    def _lower(self, sentence: str, previous: tuple[str, ...]) -> bool:
        """A term's description in lower case, as API references write it ("dispose ():" over "the dispose
        function is supposed to ..."): its first sentence when a verb makes it one, not a noun phrase."""
        if previous or not self._names_a_thing() or sentence[:1].isupper():
            return False
        return verb_of_subject(sentence) and _prose(sentence[0].upper() + sentence[1:])

    def _lean(self, chain: list[str]) -> None:
        """Quote a sentence that leans on the ones before it. When the unit just read ends with the sentence
        it leans on, that unit grows by it: the explanation ("X does Y. Thus, Z. Also, W.") stays one quote,
        rather than a short unit and longer copies of it, of which a report could quote only the first."""
        last, sentence = self.units[-1] if self.units else None, chain[-1]
        if last and last.text.endswith(chain[-2]) and len(last.text) + len(sentence) < MAX_UNIT_CHARS:
            self._grow(last, f"{last.text} {sentence}")
            return
        self.add(" ".join(chain))

    def close_list(self) -> None:
        """A list announced by a sentence ("... if any of the following are true:"), or whose lower-case items
        complete an unfinished one ("When enabled, keep in mind that"), is one unit with it when short
        enough; otherwise its items are quoted one by one: a completing item with the sentence it completes,
        "name → Definition." under the name, any other item that is a sentence as it stands."""
        items, self.items = self.items or [], None
        text = f"{self.intro} {'; '.join(i.rstrip('.;,:') for i in items)}."
        # items completing an unfinished sentence go on in lower case (not "For example," then sentences)
        completes = not self.unfinished or all(i[:1].islower() for i in items)
        if self.intro and completes and 2 <= len(items) <= MAX_LIST_ITEMS and len(text) <= MAX_UNIT_CHARS:
            self._add_list(text)
        else:
            # too long to quote with its list, an announcing sentence that states something on its own is
            # quoted alone ("... because always is not a superset of onsuccess w.r.t. existing headers:")
            self.stated_intro()
            term = self.term
            for index, item in enumerate(items):
                definition = _DEFINITION_ITEM.match(item)
                if definition and definition["term"].split()[0].lower() not in _NOT_NAMES:
                    # "sqlite3_prepare() → Compile SQL text into byte-code ...": a definition under its name
                    self.term, self.previous, item = definition["term"], (), definition["text"]
                elif (
                    item[:1].islower()
                    and self.intro
                    and (self.unfinished or len(self.intro + item) < MAX_UNIT_CHARS)
                ):
                    # "If, after scanning the directory, only one document ..."; "HAProxy is not : an
                    # explicit HTTP proxy, ..." (an item of a list too long to quote whole, with its intro;
                    # after "…" when items before it are left out: "... fields: … the command to execute")
                    # (its announcing sentence, not the paragraph's others again: quoted as they came)
                    lead = (split_sentences(self.intro) or [self.intro])[-1]
                    item = f"{lead} {'… ' if index else ''}{item}"
                shortest = TERM_MIN_WORDS if definition else STATEMENT_MIN_WORDS
                # a long item is judged by its first sentence: is_statement refuses one over MAX_UNIT_CHARS
                first = next(iter(split_sentences(item)), item) if len(item) > MAX_UNIT_CHARS else item
                whole = is_statement(first, shortest) and (self.intro or not list_fragment(item))
                for sentence in split_sentences(item) if whole else ():
                    self.sentence(sentence)
                self.term = term
        self.intro, self.unfinished = "", False

    def stated_intro(self) -> None:
        """Quote the announcing sentence alone when it states something on its own and what it announces
        cannot be quoted with it: a list or a sample too long, or one the passage's end cut off ("...
        simply use the transposeInPlace() function:", a sample in the next passage, had been no quote)."""
        stated = as_statement(self.intro) if self.intro and not self.unfinished else ""
        if stated and _prose(stated) and stands_alone(stated) and not self._needs_subject(stated):
            # shown with its colon and what it announces elided, as the page says it: its colon made a full
            # stop read as a whole statement (36 quotes in 13 of the nineteenth reading's 16 reports)
            self.add(f"{stated[:-1]}: …")

    def _add_list(self, text: str, sample: bool = False) -> None:
        """Quote an announced list or sample; when the unit just read ends with the announcing sentence (it
        leaned on the one before: "... are not considered. This module does not comply ..."), that unit
        grows by the list, when short enough (one quote, not two that share a sentence); see _leaning. A
        sample's intro quoted alone just before stays a quote of its own too (it may answer alone)."""
        last = self.units[-1] if self.units else None
        parts = split_sentences(self.intro) or [self.intro]
        if sample and last is not None and last.text == parts[0]:
            last = None
        if last is not None and (text.startswith(last.text) or last.text.endswith(parts[0])):
            grown = text if text.startswith(last.text) else f"{last.text[: -len(parts[0])]}{text}"
            if len(grown) <= MAX_UNIT_CHARS:
                self._grow(last, grown)
                return
        if not self._leaning(text):
            self.add(text)

    def _leaning(self, text: str) -> bool:
        """Whether the announcing sentence (one) leans on the one before ("This means you must ...:"; not a
        section's "This module defines ...:", which points at its page's subject): then `text` grows the unit
        just read if that ends with the sentence before, and is no quote otherwise."""
        parts = split_sentences(self.intro) or [self.intro]
        opening = len(self.previous) < 2 and bool(self.subject) and points_at_subject(parts[0])
        # an example's "This sets up a TCP server on port 514 ...:" - "This" is the sample it announces
        opening = opening or (
            len(self.previous) < 2 and bool(_EXAMPLE.match(self.label) and _BARE.match(parts[0]))
        )
        if len(parts) > 1 or not dangles(parts[0]) or opening:
            return False
        last = self.units[-1] if self.units else None
        before = self.previous[0] if len(self.previous) == 2 else ""
        if last and before and last.text.endswith(before) and len(last.text) + len(text) < MAX_UNIT_CHARS:
            self._grow(last, f"{last.text} {text}")
        return True

    def _grow(self, last: Quote, text: str) -> None:
        tokens = content_tokens(text)
        self.units[-1] = Quote(text, last.n, last.section, last.position, frozenset(tokens), last.subject)

    def line(self, line: str) -> None:
        if _EDITORS_NOTE.fullmatch(line.strip()):
            return  # "[DEPRECATED in version 5.4]": no sentence before the first, "This command is ..."
        if option := _OPTION_ROW.match(line.strip()):  # "| --restrict-to-path PATH | restrict ... Can be ..."
            self.term, self.previous, self.intro = option["name"].strip(), (), ""
            line = option["text"]  # ... its description, under the option it describes
        item = LIST_ITEM.match(line)
        text = line[item.end() :] if item else line
        (hanging, self.hanging), (around, self.around) = (self.hanging, ""), (self.around, "")
        code = sample_code(text) or text
        marked = not table_row(text) and (code != text or any(m in text for m in (*SAMPLE_MARKS, "(", ";")))
        rest = not is_statement(text) and not term_line(text)  # the next term ("{borgmajor}:") is no sample
        defined = hanging and len(hanging.split()) >= TERM_MIN_WORDS and not points_elsewhere(hanging)
        if defined and self.term and term_line(text):
            self.add(hanging)  # "The version of borg, e.g.: 1.0.8rc1" under its term, ending on its example
        if hanging and not item and marked and len(code) <= SAMPLE_CHARS and rest:
            self.around = f"{hanging} {code_span(code)}"  # "A directive of the form `export(f, g)`"
            return
        if around and not item and text[:1].islower():
            first, self.previous = (split_sentences(text) or [text])[0], self.previous[:-1]  # no fragment
            self.sentence(f"{around} {first}")  # "... `export(f, g)` specifies that ... exported."
            text = text[len(first) :].strip()
            if not text:
                return
        elif around:
            self.add(around)  # "... can be done by something like `read.table(...)`", whole
        if item and self.term and (self.term_list or not self.previous):
            self.term_list = (text,)  # "qemuDomainObjExitMonitor():" over its list of steps
        if item and not self.intro and self.items is None and (list_fragment(text) or asks(text)):
            return  # "In CHECK constraints of a table." after "... may not be used:"; a question alone
        if item and (self.intro or self.items is not None or not is_statement(text)):
            self.items = [*(self.items or []), text]
            return
        if self.items is not None:
            self.close_list()
        if self.term_list and not item:  # ... then "These functions must not be used ...": not the term's
            self.term, self.previous, self.term_list = "", self.term_list, ()
        code = sample_code(text) if not item else None
        if code is not None:
            self._sample(code)
            return
        if table_row(text):  # a table's row is no sample of what the sentence before announces
            self.intro = ""
            return
        if apparatus(text) and (self.intro or VERSION_NOTE.match(text)):
            self.aside = self.intro if not VERSION_NOTE.match(text) else self.aside
            return  # "Warning", "New in version 3.0.18.": the sample after it is still the intro's
        if term_line(text):  # what a sentence announced is the list of terms: no sample of it ("/:" then
            self.term, self.previous, self.intro = text.rstrip(":").strip(), (), ""  # "directories", zsh)
            return
        default = DEFAULT_FIELD.match(text)
        if default and self.label and not item and not NO_VALUE.match(default["value"]):  # under its name
            self.add(f"{default['field']}: {code_span(default['value'])}")
            self.intro = ""
            return
        sample = not is_statement(text) and len(text) <= SAMPLE_CHARS and not no_sample(text)
        if self.intro and not item and not sample and (LINE_BREAK in text or code_like(text)):
            self.stated_intro()  # a sample too long to quote with its intro ("... solutions:" over a program)
            self.intro = ""
        if self.intro and not self.unfinished and not item and sample:
            # an API page's field and its type ("Return type : None", "Returns : Callable[[F], F]"): no sample
            if not _TYPE_VALUE.match(text.strip()) or len(self.intro.split()) > _FIELD_WORDS:
                self._add_list(f"{self.intro} {code_span(text)}", sample=True)  # "To rotate the logs:" + it
            self.intro = ""
            return
        # "In this example we assume ... As usual, the examples show only ..." then the sample: a paragraph
        # that names it as an example is quoted with it (postfix-doc's null client: the main.cf answers)
        before = self.units[-1] if self.units and self.previous and self.follows_prose else None
        if sample and not item and before is not None and any(mark in text for mark in SAMPLE_MARKS):
            fits = len(before.text) + len(text) < MAX_UNIT_CHARS
            if (
                NAMES_EXAMPLE.search(" ".join(self.previous))
                and fits
                and before.text.endswith(self.previous[-1])
            ):
                self._grow(before, f"{before.text} {code_span(text)}")
                self.follows_prose = False
                return
        on_sample = self.after_sample and leans_back((split_sentences(text) or [text])[0])  # "These ..."
        self.follows_prose, self.after_sample = not sample and not on_sample, False
        last = split_sentences(text)[-1] if text.strip() else ""
        # a paragraph too long to quote with the sample after it announces it by its last sentence (Flask's
        # "... you can limit that by setting the MAX_CONTENT_LENGTH config key:" ends 313 characters)
        lone = announces(last) and not leans_back(last) and _sample_next(self.after)
        announced = text if announces(text) else last if lone else ""
        self.unfinished = not announced and bool(UNFINISHED.search(last)) and last[:1].isupper()
        self.intro = announced or (last if self.unfinished else self.aside)
        self.aside = ""
        for sentence in split_sentences(text):
            self.sentence(sentence)
        self.hanging = last if last[-1:].isalnum() and last[:1].isupper() and len(last.split()) > 2 else ""

    def _sample(self, code: str) -> None:
        """A sample the corpus text marks as one (sample_code): quoted with the sentence that announces it,
        or with the paragraph just before that names it as an example, when short; else read as any line
        (never as sentences cost held-out Git a gold page: bench/quality/JOURNAL.md, session 36)."""
        short = len(code) <= SAMPLE_CHARS
        before = self.units[-1] if self.units and self.previous and self.follows_prose else None
        named = before is not None and before.text.endswith(self.previous[-1])
        named = named and bool(NAMES_EXAMPLE.search(" ".join(self.previous)))
        # ... a message the page announces, whole ("... a very public announcement saying:", git-tag(1))
        message = not code_like(code) and len(self.intro) + len(code) < MAX_UNIT_CHARS
        if self.intro and not self.unfinished and (short or message):
            self._add_list(f"{self.intro} {code_span(code)}", sample=True)
        elif before and named and short and len(before.text) + len(code) < MAX_UNIT_CHARS:
            self._grow(before, f"{before.text} {code_span(code)}")
        else:
            self.stated_intro()
            self.intro = ""
            self.line(code)  # a long message, a session's output: the page's lines
            self.after_sample = True
            return
        self.intro, self.unfinished, self.aside = "", False, ""
        self.follows_prose, self.after_sample = False, True


def quotes(passage: str, n: int, headings: Sequence[str] = (), term: str = "") -> list[Quote]:
    """The passage's quotable units, in order: sentences (one leaning on the one before quoted with it), a
    definition's under its term (``term``: one that ended the passage before), a list of fragments or a short
    sample with the sentence announcing it. Navigation (contents, "See also") has none, nor an FAQ's index."""
    if navigation(headings) or question_index(passage):
        return []
    lines = passage.split("\n", 1)
    heading = _HEADING_LINE.match(lines[0].strip())
    passage = (lines[1] if len(lines) > 1 else "") if heading else passage
    label = section_name(headings)  # a sub-section's name, not the page's nor an admonition's title
    subject = section_label(headings[0]).replace("*", "").replace("`", "") if headings else ""
    # "This option ..." names its entry, "This example ..." in a sub-section that sub-section, not the page
    entry = heading and len(lines[0].strip()) - len(lines[0].strip().lstrip("#")) == DEFINITION_LEVEL
    entry = entry or bool(_API_HEADING.match(label))  # Node's "Class: Immediate": "This object ..." is one
    subject = label if label and (entry or len(headings) > 2) else subject
    reader = _Reader(n, label, [], subject=subject)
    reader.term = term.rstrip(":").strip() if term and term_line(term) else ""
    paragraphs = re.split(r"\n\s*\n", passage)
    for paragraph, after in zip(paragraphs, [*paragraphs[1:], ""], strict=True):
        reader.after = after
        for line in logical_lines(paragraph):
            reader.line(line)
        if reader.items is not None and not LIST_ITEM.match(paragraph.strip()):
            reader.close_list()
    if reader.items is not None:
        reader.close_list()
    elif announces(reader.intro):
        reader.stated_intro()
    if reader.around:  # a sentence that ends on its sample, the passage's last
        reader.add(reader.around)
    return reader.units


def _sample_next(after: str) -> bool:
    """The next paragraph is a sample, which a paragraph too long to quote with it announces by its end."""
    return not LIST_ITEM.match(after) and page_sample(after)


def _step(sentence: str, previous: tuple[str, ...]) -> bool:
    """A whole sentence of three words or more leaning on a quotable one: "Then, edit the zone file."."""
    whole = _prose(sentence, 3) and sentence.rstrip().endswith(".") and leans_back(sentence)
    return whole and bool(previous) and _prose(previous[-1])


def _prose(sentence: str, min_words: int = STATEMENT_MIN_WORDS) -> bool:
    return (
        is_statement(sentence, min_words)
        and not points_elsewhere(sentence)
        and not code_like(sentence)
        and not sentence.startswith("(")
        and not _NOT_PROSE.search(sentence)
        and not VERSION_NOTE.match(sentence)  # version history, not what the thing does
        and sentence.count("(") == sentence.count(")")  # not a piece of a parenthesis
    )
