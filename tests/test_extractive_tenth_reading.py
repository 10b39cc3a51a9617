"""What the readings of sessions 39-40 left and session 40 mended (issue [quality] part 2; libvirt's docutils
pages, bench/quality/JOURNAL.md session 40): labels that outlived what they name. Invented inputs."""

from __future__ import annotations

from pathlib import Path

from deepresearch.extractive.sentences import quotes
from deepresearch.extractive.text import heading_passages
from deepresearch.search.documents import extract_text


def _page(body: str) -> str:
    """The text the corpus reads from a page of this body."""
    html = f"<html><head><title>Lamp</title></head><body><main>{body}</main></body></html>".encode()
    return extract_text(Path("lamp.html"), html).text


def _labelled(text: str) -> dict[str, str]:
    """Each quote of the page's passages, with the label the report prints before it."""
    return {q.text: q.section for p in heading_passages(text) for q in quotes(p.text, 1, p.headings, p.term)}


def test_a_definition_lists_last_term_does_not_label_the_paragraph_after_the_list() -> None:
    # libvirt's qemu-threads.html: "qemuDomainObjExitMonitor()" over its list of steps, then after the
    # list "These functions must not be used by an asynchronous job." was quoted under that one function
    text = _page(
        "<h1>Lamp rules</h1><section><h2>Keeper methods</h2><dl>"
        "<dt><code>lightLamp()</code></dt><dd><ul><li><p>Takes the wick lock</p></li>"
        "<li><p>Strikes the flint</p></li></ul></dd>"
        "<dt><code>trimLamp()</code></dt><dd><ul><li><p>Cuts the charred wick</p></li>"
        "<li><p>Releases the wick lock</p></li></ul></dd></dl>"
        "<p>The keeper must never call either method while the beacon turns at night.</p>"
        "<dl><dt><code>dimLamp()</code></dt><dd><p>Lowers the flame of the lamp to half its height.</p></dd></dl>"
        "</section>"
    )
    labels = _labelled(text)
    assert labels["The keeper must never call either method while the beacon turns at night."] == (
        "Keeper methods"
    )
    # a term's own description is still labelled with it
    assert labels["Lowers the flame of the lamp to half its height."] == "dimLamp()"
