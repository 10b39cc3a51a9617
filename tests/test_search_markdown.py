"""A Markdown file's hard-wrapped paragraphs read as whole sentences (deepresearch/search/markdown.py): the
reader's trial saw "... with a single conditional" quoted without the "UPDATE that succeeds only once" the
next line held. Invented text; each block kind that must keep its lines is checked beside the prose."""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

from deepresearch.extractive.reading.sentences import quotes
from deepresearch.report.render import markdown_text
from deepresearch.search.documents import extract_text
from deepresearch.search.markdown import unwrap

WRAPPED = """# The lamp

The keeper records each lighting with a single conditional
UPDATE that succeeds only once, so a second keeper never lights
`LampTwo` by mistake.
"""


def test_a_wrapped_line_that_starts_with_a_capital_goes_on_with_its_sentence(tmp_path: Path) -> None:
    page = tmp_path / "lamp.md"
    page.write_text(WRAPPED)
    text = extract_text(page, page.read_bytes()).text
    sentence = (
        "The keeper records each lighting with a single conditional UPDATE that succeeds only once, so a"
        " second keeper never lights `LampTwo` by mistake."
    )
    assert [u.text for u in quotes(text, 1, ("The lamp",))] == [sentence]
    # a plain-text file keeps its lines as they are (its wrapping rules are not Markdown's)
    notes = tmp_path / "lamp.txt"
    notes.write_text(WRAPPED)
    assert "conditional\nUPDATE" in extract_text(notes, notes.read_bytes()).text


def test_blocks_keep_their_lines_and_list_items_join_their_own() -> None:
    kept = [
        "```sh",
        "lamp --light",
        "Lamp --dim",
        "```",
        "",
        "    indented code",
        "    More code",
        "",
        "| lamp | wick |",
        "|------|------|",
        "| oil  | long |",
        "gas | short",
        "",
        "> A quoted line",
        "> Another quoted line",
        "## Heading",
        "Text under it",
        "---",
    ]
    wrapped = [
        "Title",
        "=====",
        "Prose that wraps",
        "Onto a line with a hard break  ",
        "And the next line.",
        "",
        "- an item that wraps",
        "  Onto this line",
        "- Another item",
        "",
    ]
    unwrapped = [
        "Title",
        "=====",
        "Prose that wraps Onto a line with a hard break",
        "And the next line.",
        "",
        "- an item that wraps Onto this line",
        "- Another item",
        "",
    ]
    assert unwrap("\n".join([*wrapped, *kept])).split("\n") == [*unwrapped, *kept]


def test_markdowns_escapes_are_read_as_the_page_shows_them() -> None:
    # a Markdown note's "snake\_case" and "\*.example.net" are "snake_case" and "*.example.net" to a reader;
    # the report escapes what its own Markdown would read as markup (report/render.py), so the escape kept in
    # the text showed in the report ("snake\_case")
    source = (
        "# The lamp\\_keeper\n\nTrim \\*.wick files and the lamp\\_oil, but `lamp\\_x` is code,\n"
        "and a hard break\\\nstays.\n\n    indented\\_code\n\n| a \\| b | c |\n|---|---|\n"
    )
    text = unwrap(source)
    assert text.startswith("# The lamp_keeper\n\nTrim *.wick files and the lamp_oil, but `lamp\\_x` is code,")
    assert "a hard break\\\nstays." in text and "    indented\\_code" in text and "| a \\| b | c |" in text
    shown = MarkdownIt("js-default").render(markdown_text("Trim *.wick files and the lamp_oil."))
    assert "Trim *.wick files and the lamp_oil." in shown
