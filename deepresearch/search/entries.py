"""A reference's entries that a page marks otherwise than as headings, found so that each heads its own
description (search/documents.py writes them as an API entry's signature is written): haproxy-dconv's
keywords (``<div class="keyword">``) and a named term over a long description (postconf(5)'s
``<dt><b><a name="...">``), and a table of one row that names an entry and its fields (the Exim
specification's options). A passage cut inside such a description keeps the entry's name as its label."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from bs4 import PageElement, Tag

from deepresearch.extractive.reading.text import DEFINITION_LEVEL

__all__ = [
    "ENTRY_CHARS",
    "ENTRY_HEADINGS",
    "code_terms",
    "entry_row",
    "entry_terms",
    "flag_terms",
    "follows_entry",
    "inline_code",
    "long_entry",
    "named_entry",
    "shared_words",
    "tagged_terms",
]

# a reference's entries that a generator marks with a class of their own, not as headings nor terms:
# haproxy-dconv's keywords ("<div class="keyword"><b>balance</b> <algorithm></div>"), a thousand of them
# under one heading of HAProxy's configuration manual
ENTRY_HEADINGS = "div.keyword"


def follows_entry(entry: Tag) -> bool:
    """The entry comes right after another (only anchors and white space between): a second form of it."""
    for before in entry.previous_siblings:
        if isinstance(before, Tag) and before.name == "a" and not before.get_text(strip=True):
            continue
        if isinstance(before, str) and not before.strip():
            continue
        return isinstance(before, Tag) and before.css.match(ENTRY_HEADINGS)
    return False


def shared_words(forms: list[str]) -> str:
    """The words every form of an entry opens with, when they name it: "redirect" of "redirect location <loc>"
    and "redirect scheme <sch>"; "balance" of "balance <algorithm>" and "balance url_param <param>". Empty
    when the forms part inside a name ("set-var", "set-var-fmt": the first form names them better) or at once
    ("option x", "no option x")."""
    split = [form.split() for form in forms]
    shared: list[str] = []
    for words in zip(*split, strict=False):
        same = all(word == words[0] for word in words)
        if same and words[0][:1].isalnum():
            shared.append(words[0])
            continue
        if not same and len({word.split("-")[0] for word in words}) == 1:
            return ""  # "track-sc0", "track-sc1"
        break  # "location" against "scheme", "<algorithm>" against "url_param": arguments, not the name
    return " ".join(shared)


ENTRY_CHARS = 800


def long_entry(term: Tag) -> bool:
    """A term that holds an anchor (``<dt><b><a name="smtpd_recipient_restrictions">``) over a description of
    several paragraphs or ENTRY_CHARS characters: the reference's entry, which a passage cut inside its
    description must still be labelled with (a glossary's one-paragraph terms stay terms)."""
    described = term.find_next_sibling()
    if term.find("a", attrs={"name": True}) is None or described is None or described.name != "dd":
        return False
    return len(described.find_all("p")) > 1 or len(described.get_text()) > ENTRY_CHARS


def entry_terms(root: Tag) -> set[int]:
    """The ids (``id()``) of the definition terms that head their descriptions: those with an id (an API
    entry's signature; not one of the few of a long list) or over a long description (long_entry), unless
    inside the description of a term that does not - a heading there would label the terms after its list
    (diffutils' "ln=36" in --palette's description, over every option after it)."""
    entries = {id(dt) for dt in root.find_all("dt") if dt.get("id") or long_entry(dt)}
    for listed in root.find_all("dl"):
        terms = listed.find_all("dt", recursive=False)
        with_id = [dt for dt in terms if dt.get("id") and not long_entry(dt)]
        if len(with_id) * 10 < len(terms):  # Texinfo's index anchor on a few of a list's terms (zsh's "read")
            entries -= {id(dt) for dt in with_id}
    for dt in root.find_all("dt"):
        inside = dt.find_parent("dd")
        outer = inside.find_previous_sibling("dt") if inside is not None else None
        if outer is not None and id(outer) not in entries:
            entries.discard(id(dt))
    return entries


def flag_terms(root: Tag) -> None:
    """A flag's term in a command's description names the command too: "read -r", not "-r", which a reader
    takes for another command's (zsh's builtins: read's -r and -A under a question on typeset, whose -r and
    -A mean other things): the plain words its command's term opens with ("git reset", not "[<mode>]")."""
    for term in root.find_all("dt"):
        inside, flag = term.find_parent("dd"), term.get_text(" ", strip=True)
        if inside is None or not _FLAG.match(flag):
            continue
        # the command's terms stand right before its description ("read [ -rszpqAclneE ] ...", "[ -u n ] ...")
        command = ""
        for outer in inside.find_previous_siblings(True):
            if outer.name != "dt":
                break
            words = outer.get_text(" ", strip=True).split()
            command = " ".join(itertools.takewhile(_COMMAND.fullmatch, words[:_COMMAND_WORDS]))
        if command and not flag.startswith(command):  # "git reset --soft", "read -r"
            term.insert(0, f"{command} ")


def tagged_terms(root: Tag) -> None:
    """roffit's manual pages (curl's): a tagged paragraph's tag (nroff's ``.IP CURL_GLOBAL_SSL``) is a
    ``span.nroffip`` alone in its paragraph, over the paragraphs of its description; it heads them as a
    definition's term does ("The implication here is that if this bit is not set ..." was quoted without
    the flag it is about, and "CURLE_REMOTE_FILE_NOT_FOUND" without its error's description). A tag that
    is a footnote's number ("[4]") heads nothing, and its marks in the text go, as a marked-up footnote's
    do: "being set[4]" read as a citation of the report's fourth source. The list ends at the first paragraph
    back at the margin (`p.level0`): the section's heading is written again before it, or the tutorial's
    text after its list of flags was labelled with the last flag."""
    notes: set[str] = set()
    for tag in root.select("p > span.nroffip"):
        name = " ".join(tag.get_text(" ").split())
        if _NOTE.fullmatch(name):
            notes.add(name)
            tag.decompose()
        elif name and _tag_of(tag.parent) == name:
            _close_tagged(tag.parent)
            tag.parent.replace_with(f"\n\n{'#' * DEFINITION_LEVEL} {name}\n\n")
    for text in root.find_all(string=_NOTE_MARK) if notes else []:
        if text.find_parent(("pre", "code")) is None:
            text.replace_with(_NOTE_MARK.sub(lambda m: "" if m[0] in notes else m[0], str(text)))


def _close_tagged(paragraph: Tag) -> None:
    """Before the first paragraph at the margin after a tagged paragraph's description, its section's heading
    again (nothing when another tag or a section comes first)."""
    section = paragraph.find_previous("h2")
    for after in paragraph.find_next_siblings(True):
        if after.name in ("h1", "h2") or _tag_of(after):
            return
        if "level0" in (after.get("class") or []) and after.get_text(strip=True) and section is not None:
            after.insert_before(f"\n\n## {' '.join(section.get_text(' ').split())}\n\n")
            return


def _tag_of(paragraph: Tag) -> str:
    """The tag a paragraph holds alone (roffit's ``span.nroffip``), or ""."""
    tag = paragraph.select_one("span.nroffip")
    name = " ".join(tag.get_text(" ").split()) if tag is not None else ""
    return name if name and " ".join(paragraph.get_text(" ").split()) == name else ""


_NOTE = re.compile(r"\[\d{1,2}\]")
_NOTE_MARK = re.compile(r"(?<=[\w.,;:)'\"’”])\[\d{1,2}\](?=[\s.,;:!?)]|$)")


_FLAG = re.compile(r"[-+][\w-]")
_COMMAND = re.compile(r"[a-z][\w-]*")
_COMMAND_WORDS = 3
_NAME = re.compile(r"[^\s|:]{1,60}")  # "forbid_filter_reply", "$local_part", "tls_advertise_hosts"
_FIELD = re.compile(r"[A-Z][\w ]{0,20}: \S")  # "Use: redirect", "Default: false"


def entry_row(table: Tag) -> tuple[str, list[str]] | None:
    """A table of one row that names an entry, then its fields ("forbid_filter_reply | Use: redirect | Type:
    boolean | Default: false": each option of the Exim specification, its description in the paragraphs
    after): the name and the fields. Its description said "If this option is true, ..." under no name."""
    rows = table.find_all("tr")
    if len(rows) != 1:
        return None
    cells = [" ".join(c.get_text(" ").split()) for c in rows[0].find_all(["td", "th"], recursive=False)]
    if len(cells) < 2 or not _NAME.fullmatch(cells[0]) or not all(_FIELD.match(c) for c in cells[1:]):
        return None
    return cells[0], cells[1:]


def named_entry(item: Tag) -> bool:
    """A list item that is a name in code, then its description ("<li><p><code>CELERYD_USER</code></p>
    <blockquote>User to run the worker as.</blockquote>"): one item, "- CELERYD_USER: User to run the worker
    as.", so the name labels its description as a definition list's term does - and nothing after the list."""
    blocks = [c for c in item.children if isinstance(c, Tag)]
    if len(blocks) != 2 or blocks[0].name != "p":
        return False
    parts = [c for c in blocks[0].children if not (isinstance(c, str) and not c.strip())]
    if len(parts) != 1 or not (isinstance(parts[0], Tag) and inline_code(parts[0])):
        return False
    name = " ".join(blocks[0].get_text(" ").split())
    described = " ".join(blocks[1].get_text(" ").split())
    if not name or len(name) > 60 or not described:
        return False
    item.clear()
    item.append(_item(name, described))
    return True


def _item(name: str, described: str) -> str:
    """A name and its description as one list item, the name labelling the description (sentences.py)."""
    return f"- {name}: {described}"


def inline_code(tag: Tag) -> bool:
    """Inline code: ``<code>``, ``<tt>``, ``<kbd>``, ``<samp>``, and plain docutils' (rst2html) ``<span
    class="docutils literal">``."""
    return tag.name in ("code", "tt", "kbd", "samp") or "literal" in (tag.get("class") or ())


def code_terms(root: Tag) -> None:
    """A paragraph of names in code over a paragraph that describes them (plain docutils' options, libvirt's
    "<p>-d, --daemon</p><p>Run as a daemon ...</p>", an XML element over its block quote) is one item, "- -d,
    --daemon: Run as a daemon ...", as named_entry makes of a list's: the names label their description and
    nothing after it (as a term line they labelled every paragraph after the block quote). Not in a table's
    cell (PostgreSQL's column name and type over its meaning), a list or a term, not a sample a sentence
    announces ("... run:"), nor over the rest of a sentence (a description opens with a capital)."""
    for paragraph in root.find_all("p"):
        if paragraph.find_parent(["td", "th", "li", "dt"]) is not None or not _names_only(paragraph):
            continue
        before, after = _next_block(paragraph.previous_siblings), _next_block(paragraph.next_siblings)
        # its paragraphs apart, its inline markup as it reads ("Use <code>-f</code>." is not "Use -f .")
        parts = (after.find_all("p") or [after]) if after is not None else []
        described = " ".join(" ".join(part.get_text().split()) for part in parts)
        if after is None or after.name not in ("p", "blockquote") or not described[:1].isupper():
            continue
        # ... nor one of a run of code paragraphs (libvirt's Java names of "int virDomainSetMaxMemory (...);")
        if any(block is not None and block.name == "p" and _names_only(block) for block in (before, after)):
            continue
        if before is None or not before.get_text(strip=True).endswith(":"):
            after.replace_with(f"\n\n{_item(' '.join(paragraph.get_text('').split()), described)}\n\n")
            paragraph.replace_with("")


def _names_only(paragraph: Tag) -> bool:
    codes = [tag for tag in paragraph.find_all(inline_code) if tag.find_parent(inline_code) is None]
    rest = "".join(t for t in paragraph.find_all(string=True) if t.find_parent(inline_code) is None)
    return bool(codes) and re.fullmatch(r"[\s,/|]*", rest) is not None and len(paragraph.get_text()) <= 80


def _next_block(siblings: Iterable[PageElement]) -> Tag | None:
    """The first element among the siblings, if no text comes before it."""
    for sibling in siblings:
        if isinstance(sibling, Tag):
            return sibling
        if str(sibling).strip():
            return None
    return None
