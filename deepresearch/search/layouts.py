"""What a documentation generator lays out otherwise than the HTML it writes says, read as the page shows it
(a twelfth reading, GLib's gtk-doc pages and Eigen's Doxygen pages: bench/quality/JOURNAL.md, session 42):

- a sample set line by line in blocks (Doxygen's ``div.fragment`` of ``div.line``s) is one ``<pre>``: each
  line was a paragraph, and a report showed a sample's first line only ("... by calling the following routine
  before creating the threads: `#include <Eigen/Core>`", the routine on its fourth line); the hover tooltips
  its names carry (``div.ttc``: "Definition: Matrix.h:180 Eigen::ComputeThinV ...") are no text;
- a listing beside its line numbers (gtk-doc's ``table.listing_frame``) is its code alone, and a table of
  samples (Doxygen's "Example: | Output:") its samples one after another - read as a table's row, the
  numbers or the code ran into the code or its output ("1 2 3 4: // Notice that ...");
- Doxygen's page title (``div.headertitle > div.title``, no heading) heads the page, its sections below it:
  the sections were the first heading of their path, which names no section of a quote's label
  (extractive/reading/pages.py section_name), and 245 of 285 quotes went unlabelled;
- a DocBook variable list laid out as a table (``table.variablelist``) is the definition list it is, and a
  paragraph's run-in title ("<b>G_SLICE. </b>This environment variable allows ...", DocBook's formalpara)
  the term of its paragraph: the name was a sentence of its own, dropped, and its description quoted without
  it ("If this environment variable is set, GLib assumes ...");
- an empty annotations cell at a row's end says nothing: gtk-doc's made each member a row of three,
  "constructor () | the constructor function ... |", whose name labelled nothing (not any empty last cell:
  a navigation bar's "Prev | Up |" would read as a term, "Prev: Up"); and a table of names and their
  descriptions (gtk-doc's members and parameters) is a definition list too: "dispose ()" labels all of its
  description ("Before returning, dispose should chain up ..." read under "Members");
- a table whose every row links into the page and holds no sentence is its table of contents (gtk-doc's
  "Functions", "Properties", "Signals" over a module's entries: "GMainLoop *: g_main_loop_new ()" rows,
  ranked as the section that answers beside the entries they name);
- a section's text after one of its sub-sections ends stands under the section's heading again (DocBook's
  nested sections: GLib's GDB paragraphs after the "Locale" sub-section were labelled "Locale");
- and since a thirteenth reading (FFmpeg's texi2html manuals and Doxygen pages, gnuplot's LaTeX2HTML pages:
  the journal, session 43): a heading's links hidden from a reader (texi2html's "TOC" back-link: "3.19 How do
  I run ffmpeg as a background task? TOC", on 1,649 headings, and no FAQ heading ended in its "?"), where
  Doxygen says an entry is defined and who calls it ("Definition at line 564 of file opt.h.", "Referenced by
  decode(), ..."), LaTeX2HTML's navigation panel ("Next: Reset Up: Commands Previous: Replot Index", on every
  page: a page was read because its panel named the next one) and its page references, an icon in "(p. )"
  ("see enhanced (p. )") are no text; and a plain term's description that goes on after a list nested in it
  has its term written again (its text had been labelled with the list's last value); nor is LaTeX2HTML's
  placeholder for a formula it could not set, "N#N" in a ``span.MATH`` ("set boxwidth 4#4width5#5", 1,471 of
  them on gnuplot's pages: the "<" and ">" of "<width>", its images.tex says) - the word stays, the marks go;
- and since a fourteenth reading (CMake's and BIND's Sphinx pages: the journal, session 44): the prose after
  a definition list stands under the list's heading again, not under its last term.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable

from bs4 import BeautifulSoup, PageElement, Tag

__all__ = ["generator_layouts"]

_PAGE_REFERENCE = re.compile(r"\s*\(p\.\s*$")
_MATH_PLACEHOLDER = re.compile(r"\s*(\d+)#\1\s*")
RUN_IN_WORDS = 4
"""The most words of a run-in title ("G_SLICE.", "Standard variables."): a longer bold phrase is emphasis."""


def generator_layouts(root: Tag) -> None:
    """Rewrite the page's generator layouts (see the module) in place, before its text is read."""
    hidden = ":is(h1, h2, h3, h4, h5, h6) a[aria-hidden=true], p.definition, p.reference, div.navigation"
    for tag in root.select(hidden):
        tag.decompose()
    for icon in root.select("a:has(> img[alt='[*]'])"):  # LaTeX2HTML's "(p. <icon>)": the parenthesis goes
        before, after = icon.previous_sibling, icon.next_sibling
        cut = _PAGE_REFERENCE.search(before) if isinstance(before, str) else None
        if cut is not None and isinstance(after, str) and after.startswith(")"):
            before.replace_with(before[: cut.start()])
            after.replace_with(after[1:])
        icon.decompose()
    for math in root.select("span.MATH"):
        if _MATH_PLACEHOLDER.fullmatch(math.get_text()):
            math.decompose()
    for tip in root.select("div.fragment div.ttc, div.fragment + div.ttc"):
        tip.decompose()
    for fragment in root.select("div.fragment"):
        lines = fragment.select("div.line")
        code = "\n".join(line.get_text() for line in lines) if lines else fragment.get_text()
        fragment.replace_with(_tag("pre", code))
    _doxygen_title(root)
    _resumed_terms(root)
    for pre in root.select("td > pre"):
        if _line_numbers(pre):
            pre.decompose()
    places = {str(tag.get("id") or tag.get("name")) for tag in root.select("[id], a[name]")}
    for table in root.find_all("table"):
        if _contents(table, places):
            table.decompose()
        else:
            _samples_table(table)
    for cell in root.select('td[class$="_annotations"]'):  # gtk-doc's members', parameters' annotations
        if not cell.get_text(strip=True) and cell.find_next_sibling(["td", "th"]) is None:
            cell.decompose()
    # a variable list, and gtk-doc's tables of a name and its description (a struct's members, parameters);
    # after the samples: a listing inside a description is a sample before its row moves into the list
    for table in root.find_all("table"):
        if table.css.match("table.variablelist") or table.select_one('td[class$="_description"]'):
            _definition_list(table)
    for paragraph in root.find_all("p"):
        _run_in_title(paragraph)
    for section in root.select(_SECTIONS):
        _section_goes_on(section)
    for listed in root.find_all("dl"):
        _list_ends(listed)


_SECTIONS = "div.refsect1, div.refsect2, div.refsect3, div.sect1, div.sect2, div.sect3, div.section, section"
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


GOES_ON_WORDS = 8
"""The fewest words of the text after a sub-section that is written under its section's heading again: not
gtk-doc's "Since: 2.14" after each function's parameters (1,150 headings written again, for nothing)."""


LIST_ENDS_WORDS = 4
"""... and after a definition list, the fewest words of a paragraph written under the list's heading again:
CMake's "For example, a toolchain file might contain:" over its sample (a field, "Since: 2.14", has fewer)."""


def _section_goes_on(section: Tag) -> None:
    """The text its parent section holds after it (not another section) under the parent's heading again."""
    after = next((tag for tag in section.find_next_siblings() if tag.get_text(strip=True)), None)
    parent = section.parent
    if after is None or after.name in _HEADINGS or after.css.match(_SECTIONS) or parent is None:
        return
    if len(after.get_text(" ").split()) < GOES_ON_WORDS:
        return
    heading = parent.find(_HEADINGS) if parent.css.match(_SECTIONS) else None
    # ... its own heading, not one of a sub-section before (a parent with none heads nothing)
    if heading is not None and next(p for p in heading.parents if p.css.match(_SECTIONS)) is parent:
        section.insert_after(copy.copy(heading))


def _list_ends(listed: Tag) -> None:
    """The prose after a definition list (not one in a term's description: _resumed_terms) under the heading
    the list stands under again: the list's last term had labelled it (Sphinx's "CMake find_* commands will
    look in the sysroot ..." after cmake-toolchains(7)'s list of variables, under "CMAKE_<LANG>_COMPILER")."""
    after = _said(listed.next_siblings)
    if listed.find_parent("dd") is not None or not isinstance(after, Tag) or after.name not in ("p", "div"):
        return
    if after.css.match(_SECTIONS) or after.find(["dl", *_HEADINGS]) is not None:
        return
    heading = listed.find_previous(_HEADINGS)
    if heading is not None and len(after.get_text(" ").split()) >= LIST_ENDS_WORDS:
        listed.insert_after(copy.copy(heading))


def _line_numbers(pre: Tag) -> bool:
    """A listing's line numbers: "1" to "n", a line each, beside a cell with the listing (not a sample's
    output of numbers, Eigen's "4 0" over "0 4")."""
    numbers = pre.get_text().split()
    cell = pre.find_parent("td")
    beside = cell is not None and any(c.find("pre") for c in cell.find_next_siblings(["td", "th"]))
    return beside and numbers == [str(n) for n in range(1, len(numbers) + 1)]


def _tag(name: str, text: str) -> Tag:
    """A new element holding ``text`` as it is (a sample's lines and spaces)."""
    tag = BeautifulSoup("", "html.parser").new_tag(name)
    tag.string = text
    return tag


def _resumed_terms(root: Tag) -> None:
    """A plain term's description that goes on after a list of values nested in it is the term's again: its
    term is written there once more (texi2html's "-hwaccel" over its values "none" ... "qsv", then "Note that
    most acceleration methods ... will not be faster than software decoding" - labelled "qsv", as 86 of 92
    such paragraphs in FFmpeg's manuals were with their list's last value). Not an entry's (an id, a name):
    its heading labels all of it."""
    for nested in root.select("dl > dd > dl"):
        term = nested.parent.find_previous_sibling(["dt", "dd"]) if nested.parent else None
        if term is None or term.name != "dt" or term.get("id") or term.select_one("[id], a[name]"):
            continue
        # a list its description announces ("The allowed values of hwaccel are:"), then a paragraph of it
        before, after = _said(nested.previous_siblings), _said(nested.next_siblings)
        announced = isinstance(before, Tag) and before.name == "p" and before.get_text().strip().endswith(":")
        if announced and isinstance(after, Tag) and after.name == "p":
            nested.insert_after(copy.copy(term))


def _said(siblings: Iterable[PageElement]) -> PageElement | None:
    """The first of the siblings that holds text."""
    return next((s for s in siblings if (s.get_text(strip=True) if isinstance(s, Tag) else s.strip())), None)


def _doxygen_title(root: Tag) -> None:
    title = root.select_one("div.headertitle > div.title")
    if title is None:
        return
    for crumbs in title.select("div.ingroups"):  # "Dense matrix and array manipulation » Alignment issues"
        crumbs.decompose()
    text = " ".join(title.get_text(" ").split())
    for heading in root.select("div.contents h1, div.contents h2, div.contents h3, div.contents h4"):
        heading.name = f"h{int(heading.name[1]) + 1}"  # its sections, under it
    title.replace_with(_tag("h1", text) if text else "")


def _samples_table(table: Tag) -> None:
    """A table whose cells are samples: its samples one after another, without the columns' names - as a
    row "| Example: | Output: |" ends what a sentence before announces, which took no sample; each name alone
    read as a term ("Output:" labelled the section's text after it) or as the sample ("... solutions:
    `Example:`")."""
    cells = [cell for cell in table.find_all(["td", "th"]) if cell.get_text(strip=True)]
    samples = [_sample_of(cell) for cell in cells if cell.name == "td"]
    if samples and None not in samples:
        table.replace_with(*(_tag("pre", sample or "") for sample in samples))


CONTENTS_ROWS = 3
SENTENCE_WORDS = 6


def _contents(table: Tag, places: set[str]) -> bool:
    """A page's table of contents: CONTENTS_ROWS rows or more, each with a link to one of the page's
    ``places`` ("#g-binding-get-source", "GBinding.html#g-binding-get-source" on GBinding.html), and no cell
    that says something: SENTENCE_WORDS words, or a full stop (a summary's "Population variance of data.")."""
    rows = table.find_all("tr")
    linked = all(any(_entry_link(a, places) for a in row.select('a[href*="#"]')) for row in rows)
    cells = [" ".join(cell.get_text(" ").split()) for cell in table.find_all(["td", "th"])]
    said = any(len(re.findall(r"\w+", cell)) >= SENTENCE_WORDS or cell.endswith(".") for cell in cells)
    return len(rows) >= CONTENTS_ROWS and linked and not said


def _entry_link(link: Tag, places: set[str]) -> bool:
    """A link to one of the page's places that is all its cell says ("g_binding_get_source ()"): not a type
    named in a parameter's description ("a GSequenceIter")."""
    cell = link.find_parent(["td", "th"])
    said = re.sub(r"\W+", "", cell.get_text()) if cell is not None else ""
    return str(link["href"]).partition("#")[2] in places and said == re.sub(r"\W+", "", link.get_text())


def _sample_of(cell: Tag) -> str | None:
    """The code of a cell that holds one sample and no other text."""
    samples = cell.find_all("pre")
    if len(samples) != 1 or samples[0].get_text(strip=True) != cell.get_text(strip=True):
        return None
    return samples[0].get_text()


def _definition_list(table: Tag) -> None:
    """A variable list's rows (a term's cell, its description's cell, and gtk-doc's annotations of it:
    "[nullable]") as a <dl> of them."""
    rows = [row.find_all("td", recursive=False) for row in table.find_all("tr")]
    noted = [row[:2] + [c for c in row[2:] if not c.css.match('td[class$="_annotations"]')] for row in rows]
    if not rows or any(len(row) != 2 for row in noted):
        return
    listing = BeautifulSoup("", "html.parser").new_tag("dl")
    for term, description, *notes in rows:
        listing.append(_tag("dt", " ".join(term.get_text(" ").split())))
        description.name = "dd"
        said = (description.find_all("p") or [description])[-1]
        for note in notes:  # after the description it qualifies
            said.append(f" {' '.join(note.get_text(' ').split())}")
        listing.append(description.extract())
    table.replace_with(listing)


def _run_in_title(paragraph: Tag) -> None:
    """A paragraph that opens on a bold name ending in a full stop, then its text: that name's definition."""
    # its children but blanks and an anchor before it (<a name="G_SLICE"></a>)
    children = [c for c in paragraph.children if (c.get_text() if isinstance(c, Tag) else c).strip()]
    if len(children) < 2 or not isinstance(children[0], Tag) or children[0].name not in ("b", "strong"):
        return
    name = " ".join(children[0].get_text(" ").split())
    if not name.endswith(".") or not 1 <= len(name[:-1].split()) <= RUN_IN_WORDS or name.count(".") > 1:
        return
    if paragraph.find_parent(["td", "th", "li", "dd"]) is not None:
        return
    children[0].decompose()
    listing = BeautifulSoup("", "html.parser").new_tag("dl")
    listing.append(_tag("dt", name[:-1].rstrip()))
    definition = BeautifulSoup("", "html.parser").new_tag("dd")
    paragraph.replace_with(listing)
    listing.append(definition)
    definition.append(paragraph)
