"""Links in a report point only to sources the run fetched, however the page spelled them."""

from __future__ import annotations

from deepresearch.report import check_citations, render_html


def test_links_to_unfetched_urls_are_removed_in_every_spelling() -> None:
    seen = {"https://ok.example/a"}
    markdown = (
        "Read [login](HTTPS://evil.example/login), [x](//evil.example/x), see:https://evil.example/y, "
        "[mixed](HtTp://evil.example/z) and keep https://ok.example/a, HTTPS://ok.example/a and "
        "corpus://docs.md."
    )
    checked, result = check_citations(markdown, {}, seen)
    assert result.unknown_urls_removed == [
        "HTTPS://evil.example/login",
        "//evil.example/x",
        "https://evil.example/y",
        "HtTp://evil.example/z",
    ]
    assert "evil.example" not in checked
    assert "https://ok.example/a" in checked and "HTTPS://ok.example/a" in checked
    assert "corpus://docs.md" in checked
    html = render_html(checked, "report")
    assert "evil.example" not in html
