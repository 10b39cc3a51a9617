"""The extractive mode's reading quality: structure-aware extraction and chunking, BM25F, planning in plain
grammar, and a composed report that never repeats a sentence, keeps each quote's subject and says "none
found" when the sources state no limit. Real text: a Sphinx page's markup, an RST source, this repository's
own docs. The figures over a whole manual are measured by bench/quality.py, not here."""

from __future__ import annotations

import itertools
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from bench.quality.grammar import grammar_problems
from deepresearch.engine.core import open_engine
from deepresearch.extractive.asking.planning import keyword_plan
from deepresearch.extractive.bm25 import BM25F
from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import (
    content_tokens,
    heading_passages,
    section_label,
    split_sentences,
)
from deepresearch.extractive.screening import passages_of, rank_passages
from deepresearch.graph.gather import LOCAL_READS, _to_fetch
from deepresearch.report.compose import (
    NO_RISKS,
    build_report_bundle,
    extractive_critique,
    extractive_report_body,
)
from deepresearch.report.compose import extractive_review as review
from deepresearch.search.corpus import CorpusIndex
from deepresearch.search.documents import extract_text
from tests._search_helpers import corpus_settings

DOCS = Path(__file__).resolve().parent.parent / "docs"
QUALITY_DOCS = Path(__file__).resolve().parent / "fixtures" / "quality-docs"
README_QUESTION = "How does deepresearch avoid repeating paid calls when a run is resumed?"

# the markup of a page of Python's own documentation (Sphinx 5), trimmed to two sections
_SIGNATURE = (
    '<dt class="sig sig-object py" id="subprocess.run"><span class="sig-prename descclassname">'
    '<span class="pre">subprocess.</span></span><span class="sig-name descname"><span class="pre">run</span>'
    '</span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">args'
    '</span></span></em>, <em class="sig-param"><span class="n"><span class="pre">timeout</span></span>'
    '<span class="o"><span class="pre">=</span></span><span class="default_value"><span class="pre">None'
    '</span></span></em><span class="sig-paren">)</span>'
    '<a class="headerlink" href="#subprocess.run">¶</a></dt>'
)
SPHINX_PAGE = f"""<!DOCTYPE html><html><head>
<title>subprocess — Subprocess management — Python 3.11 documentation</title></head><body>
<div class="related" role="navigation"><ul><li><a href="index.html">index</a></li><li>modules |</li>
</ul></div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper"><div class="body" role="main">
<section id="module-subprocess">
<h1>subprocess — Subprocess management<a class="headerlink" href="#x">¶</a></h1>
<p>The subprocess module allows you to spawn new processes and obtain their return codes.</p>
<section id="using-the-subprocess-module">
<h2>Using the subprocess Module<a class="headerlink" href="#y">¶</a></h2>
<p>The recommended approach to invoking subprocesses is to use the run() function.</p>
<dl class="py function">{_SIGNATURE}
<dd><p>Run the command described by <em>args</em>. Wait for command to complete.</p>
<p>The timeout argument is passed to Popen.communicate(). If the timeout expires, the child process will
be killed and waited for. It is re-raised as TimeoutExpired after the child process has terminated.</p>
<div class="highlight-python3 notranslate"><pre># run a command and wait
subprocess.run(["ls", "-l"])</pre></div>
</dd></dl></section></section>
</div></div></div></div>
<div class="sphinxsidebar" role="navigation"><h3>Table of Contents</h3>
<ul><li>Sidebar zebracorn</li></ul></div>
</body></html>"""

RST_SOURCE = """:mod:`json` --- JSON encoder and decoder
========================================

Basic Usage
-----------

.. function:: dumps(obj, *, skipkeys=False)

   Serialize *obj* to a JSON formatted :class:`str` using this
   ``conversion table``.

Encoding basic Python object hierarchies::

    # not a heading: a comment in a literal block
    >>> import json

Keys in key/value pairs of JSON are always of the type :class:`str`.
"""


def test_sphinx_page_is_cut_by_headings_with_its_path_and_no_navigation() -> None:
    extracted = extract_text(Path("subprocess.html"), SPHINX_PAGE.encode())
    assert "zebracorn" not in extracted.text and "modules |" not in extracted.text  # sidebar, related bar
    assert "¶" not in extracted.text
    headings = [line for line in extracted.text.splitlines() if line.startswith("#")]
    assert headings == [
        "# subprocess — Subprocess management",
        "## Using the subprocess Module",
        "###### subprocess.run(args, timeout=None)",
    ]
    assert "\\# run a command and wait" in extracted.text  # a code comment is escaped, not a heading
    passages = heading_passages(extracted.text)
    paths = [p.headings for p in passages]
    assert paths == [
        ("subprocess — Subprocess management",),
        ("subprocess — Subprocess management", "Using the subprocess Module"),
        (
            "subprocess — Subprocess management",
            "Using the subprocess Module",
            "subprocess.run(args, timeout=None)",
        ),
    ]
    assert passages[2].text.startswith("###### subprocess.run(args, timeout=None)\n\nRun the command")
    assert section_label(passages[2].heading) == "subprocess.run(args, timeout=None)"
    assert section_label(
        "subprocess.run(args, *, stdin=None, input=None, stdout=None, capture_output=False)"
    ) == ("subprocess.run()")
    # a numbered title is no signature: SQLite's "2.2. Posix advisory locks ..." was labelled "2.2."
    numbered = "2.2. Posix advisory locks canceled by a separate thread doing close()"
    assert section_label(numbered) == numbered
    appendix = "A.1. Appendix: keywords that cannot be used as identifiers in SQL"
    assert section_label(appendix) == appendix
    release = "v2.4.1 release notes for the server (security)"
    assert section_label(release) == release
    assert section_label("class logging.handlers.RotatingFileHandler(filename, mode='a')") == (
        "logging.handlers.RotatingFileHandler()"
    )
    # the report writes a colon after the name: "*Warning*:", not "*Warning:*:"
    assert section_label("Warning:") == "Warning"


def test_rst_source_becomes_headings_and_plain_sentences() -> None:
    text = extract_text(Path("json.rst.txt"), RST_SOURCE.encode()).text
    lines = text.splitlines()
    assert "# json --- JSON encoder and decoder" in lines
    assert "## Basic Usage" in lines
    assert "###### dumps(obj, *, skipkeys=False)" in lines
    assert (
        "Serialize obj to a JSON formatted str using this conversion table." in lines
    )  # paragraph re-joined
    assert "not a heading" not in text and ">>> import json" not in text  # the literal block is left out
    assert "Keys in key/value pairs of JSON are always of the type str." in lines


def test_a_comment_in_a_markdown_code_fence_is_not_a_heading() -> None:
    text = "# Guide\n\nIntro sentence here.\n\n```bash\n# install it\npip install x\n```\n\n## Next\n\nMore."
    assert [p.headings for p in heading_passages(text)] == [("Guide",), ("Guide", "Next")]


def test_bm25f_lets_the_section_titled_like_the_question_win() -> None:
    docs = [
        {
            "title": ["guide"],
            "headings": content_tokens("Installing packages"),
            "body": content_tokens(
                "A timeout can be set for every call; the timeout is in seconds and a timeout of zero waits."
            ),
        },
        {
            "title": ["guide"],
            "headings": content_tokens("Timeouts"),
            "body": content_tokens("Every call accepts a limit in seconds."),
        },
    ]
    scores = BM25F(docs).scores("timeout")
    assert scores[1] > scores[0] > 0


def test_identifiers_match_their_parts_and_the_with_statement_keeps_its_keyword() -> None:
    tokens = set(content_tokens("subprocess.run functools.lru_cache TimeoutExpired"))
    assert {"subprocess.run", "run", "lru", "timeout"} | set(content_tokens("cache")) <= tokens
    assert "with" in content_tokens("What is the with statement?")
    assert "with" not in content_tokens("Run it with care.")
    # a version string's parts: the question's example and the page's share the commit name and the count
    asked, shown = set(content_tokens("v2.1-14-g2414721")), set(content_tokens("v1.0.4-14-g2414721"))
    assert {"g2414721", "14"} <= asked & shown
    # ... and still its parts split at the dot ("GPL-2" is in "GPL-2.0"); a hyphenated word stays one term
    assert "gpl-2" in set(content_tokens("GPL-2")) & set(content_tokens("GPL-2.0"))
    assert content_tokens("a non-fast-forward push over utf-8") == ["non-fast-forward", "push", "utf-8"]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (
            "What is the global interpreter lock and what are its limits?",
            [
                "What is the global interpreter lock?",
                "What are the limits of the global interpreter lock?",
                "How does the global interpreter lock work?",
            ],
        ),
        (
            "How does functools.lru_cache work and how is its size configured?",
            [
                "How does functools.lru_cache work?",
                "How is the size of functools.lru_cache configured?",
                "What is functools.lru_cache?",
                "What are the limitations of functools.lru_cache?",
            ],
        ),
        (
            "How do I use placeholders to bind values in sqlite3 queries?",
            [
                "How do I use placeholders to bind values in sqlite3 queries?",
                "What are the limitations of using placeholders to bind values in sqlite3 queries?",
            ],
        ),
        (
            "How does deepresearch avoid repeating paid calls when a run is resumed?",
            [
                "How does deepresearch avoid repeating paid calls when a run is resumed?",
                "What are the limitations of how deepresearch avoids repeating paid calls when a run is "
                "resumed?",
            ],
        ),
    ],
)
def test_sub_questions_are_plain_questions_from_the_question_s_structure(
    question: str, expected: list[str]
) -> None:
    plan = keyword_plan(question, max_queries=6)
    assert plan.sub_questions == expected
    assert plan.queries[0] == question and len(plan.queries) <= 6
    for sub_question in plan.sub_questions:
        assert re.fullmatch(r"(What|How|Which|Why|When|Where|Who)\b[^?]*\?", sub_question), sub_question


# --- composition over this repository's own docs ---------------------------------------------------
def _state(question: str, paths: list[Path]) -> dict[str, Any]:
    sources = [
        {
            "n": i,
            "id": f"S{i}",
            "url": f"corpus://{p.name}",
            "title": p.stem,
            "text": p.read_text(),
            "domain": "local",
        }
        for i, p in enumerate(paths, start=1)
    ]
    plan = keyword_plan(question, max_queries=4, max_sub_questions=6)
    passages = passages_of(sources)
    evidence = [
        {
            "sub_question_index": index,
            "sub_question": plan.sub_questions[index],
            "source_id": p["source_id"],
            "n": p["n"],
            "title": p["title"],
            "passage": p["text"],
            "headings": p["headings"],
            "bm25": round(score, 3),
        }
        for index, ranked in enumerate(rank_passages(question, plan.sub_questions, passages, 6))
        for score, p in ranked
    ]
    state: dict[str, Any] = {
        "run_id": "r1",
        "question": question,
        "engine": "extractive",
        "options": {},
        "artifact_dir": "research/x",
        "plan": {"sub_questions": plan.sub_questions, "queries": plan.queries},
        "sources": sources,
        "evidence": evidence,
    }
    state["findings"] = {
        name: review(name, plan.sub_questions, evidence, question)
        for name in ("fact_reviewer", "implication_reviewer", "risk_reviewer")
    }
    state["critique"] = extractive_critique(state)
    return state


def _claims(body: str) -> list[str]:
    """Every quoted sentence of the report, without its citation markers and section label."""
    found = []
    for line in body.splitlines():
        if line.startswith("- ") and "[" in line:
            text = re.sub(r"^- (\*[^*]+\*: )?", "", line)
            found += [" ".join(re.sub(r"\s*\[\d+\]", "", s).split()) for s in split_sentences(text)]
    return found


def _openings(body: str) -> list[str]:
    """The first sentence of every quote of the report."""
    return [
        split_sentences(re.sub(r"\s*\[\d+\]", "", re.sub(r"^- (\*[^*]+\*: )?", "", line)))[0]
        for line in body.splitlines()
        if line.startswith("- ") and "[" in line
    ]


def test_no_sentence_is_quoted_twice_in_the_whole_report() -> None:
    question = "How does deepresearch avoid repeating paid calls when a run is resumed?"
    state = _state(question, [DOCS / "durability.md", DOCS / "architecture.md", DOCS / "extractive-mode.md"])
    body = extractive_report_body(state)
    claims = _claims(body)
    assert len(claims) >= 3
    assert len(claims) == len(set(claims)), body
    summary = body.split("## Findings")[0]
    assert "receipt" in summary  # the mechanism the question asks about leads
    # a quote may go on with a sentence that leans on the one before it; the quote itself opens on its subject
    for claim in _openings(body):
        assert not claim.startswith("("), claim
        assert claim.split()[0].lower() not in ("it", "this", "these", "they", "its"), claim
    bundle = build_report_bundle(state, body)
    check = bundle.citation_check
    assert check["citations_checked"] > 0
    assert check["citations_supported"] == check["citations_checked"]  # every quote verified on its source


def test_disagreements_say_none_found_when_the_sources_state_no_limit(tmp_path: Path) -> None:
    page = tmp_path / "lighthouses.md"
    page.write_text(
        "# Lighthouses\n\nA lighthouse marks a coast with a light that turns at night. The lens of a "
        "lighthouse gathers the lamp's light into a beam. Keepers trimmed the wick every evening.\n"
    )
    state = _state("How does a lighthouse lens work?", [page])
    body = extractive_report_body(state)
    risks = body.split("## Disagreements and risks")[1].split("## Open questions")[0]
    assert NO_RISKS in risks
    assert "Check the limits" not in body  # no recommendation without a limit to check


def test_a_pronoun_sentence_is_quoted_with_its_antecedent_and_a_verb_first_one_with_its_section() -> None:
    passage = (
        "###### subprocess.run(args, timeout=None)\n\nRun the command described by args and wait for it.\n\n"
        "The child process is killed when the timeout expires. It is then waited for before returning.\n\n"
        "(See the notes below for the details.)"
    )
    units = quotes(passage, 1, ("subprocess", "subprocess.run(args, timeout=None)"))
    texts = [u.text for u in units]
    assert (
        "The child process is killed when the timeout expires. It is then waited for before returning."
        in texts
    )
    assert not any(t.startswith(("It ", "(")) for t in texts)
    assert all(u.section == "subprocess.run(args, timeout=None)" for u in units)
    # without a heading to name its subject, a verb-first sentence is left out
    assert not any(u.text.startswith("Run the") for u in quotes(passage.split("\n\n", 1)[1], 1, ()))


async def test_corpus_skips_sphinx_source_copies_and_serves_the_indexed_text(tmp_path: Path) -> None:
    root = tmp_path / "html"
    (root / "library").mkdir(parents=True)
    (root / "_sources" / "library").mkdir(parents=True)
    (root / "library" / "subprocess.html").write_text(SPHINX_PAGE)
    (root / "_sources" / "library" / "subprocess.rst.txt").write_text("subprocess\n==========\n\nA copy.\n")
    (root / "_sources" / "library" / "orphan.rst.txt").write_text(
        "Orphan\n======\n\nOnly the source exists.\n"
    )
    index = CorpusIndex(tmp_path / "index.db", root)
    stats = await index.reindex()
    assert stats.added == 2  # the HTML page and the source without a page
    hits = await index.search("timeout expires child process", 5)
    assert [h.url for h in hits] == ["corpus://library/subprocess.html"]
    document = await index.read("corpus://library/subprocess.html")
    assert document.text == extract_text(root / "library" / "subprocess.html", SPHINX_PAGE.encode()).text


async def test_the_readme_question_over_this_repository_s_docs_explains_the_mechanism(tmp_path: Path) -> None:
    """The README's first command, extractively, over the docs as they were when its quality was measured
    (tests/fixtures/quality-docs: docs/ keeps growing, and what a new page adds to the ranking is measured
    by bench/quality.py, not pinned here): beyond the summary, the Findings quote at least three more
    sentences, and the durability doc's receipts section is among them."""
    shutil.copytree(QUALITY_DOCS, tmp_path / "docs")
    settings = corpus_settings(tmp_path, tmp_path / "docs")
    async with open_engine(settings) as engine:
        run = await engine.create_run(README_QUESTION)
        final = await engine.execute(run.run_id)
    assert final.status == "completed", final.error
    folder = settings.workspace_dir / (final.artifact_dir or "")
    body = (folder / "deepresearch-report.md").read_text(encoding="utf-8")
    sources = json.loads((folder / "sources.json").read_text(encoding="utf-8"))["sources"]
    summary, rest = body.split("## Findings", 1)
    findings = rest.split("## Disagreements and risks", 1)[0]
    beyond = set(_claims(findings)) - set(_claims(summary))
    assert len(beyond) >= 3, body
    durability = next(s["n"] for s in sources if s["url"] == "corpus://durability.md")
    # the receipts section's quotes, on its line or as items under its name (quotes of one section of one
    # source in a row: report/lines.py paragraphs)
    lines = findings.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("- *Receipts for every external call*:"))
    items = [lines[at], *itertools.takewhile(lambda line: line.startswith("  - "), lines[at + 1 :])]
    assert any(f"[{durability}]" in line for line in items), body
    assert "Nothing beyond the summary above." not in findings, body
    check = json.loads((folder / "evidence.json").read_text(encoding="utf-8"))["citation_check"]
    assert check["citations_checked"] > 0
    assert check["citations_supported"] == check["citations_checked"]


async def test_a_round_reads_more_local_documents_than_it_would_fetch_from_the_web(tmp_path: Path) -> None:
    """A corpus document costs no fetch: past the best `sources_to_fetch`, the round reads the other corpus
    results too, up to LOCAL_READS times that many (a page one query found is no longer left unread)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for i, (part, does) in enumerate(
        [
            ("lens", "gathers the lamp's light into a beam"),
            ("prism", "bends stray light back into the beam"),
            ("lamp", "burns paraffin behind the lens"),
            ("clockwork", "turns the lens so the beam sweeps the sea"),
            ("gallery", "lets the keeper clean the lantern glass"),
            ("foghorn", "sounds when fog hides the beam"),
            ("keeper", "trims the wick of the lighthouse lamp"),
        ]
    ):
        (docs / f"{i}-{part}.md").write_text(
            f"# The lighthouse {part}\n\nThe lighthouse {part} {does}. Every lighthouse beam needs it.\n"
        )
    settings = corpus_settings(tmp_path, docs, sources_to_fetch=2, max_research_loops=1)
    async with open_engine(settings) as engine:
        run = await engine.create_run("How does a lighthouse make its beam?")
        final = await engine.execute(run.run_id)
    assert final.status == "completed", final.error
    folder = settings.workspace_dir / (final.artifact_dir or "")
    found = json.loads((folder / "search-results.json").read_text(encoding="utf-8"))["results"]
    read = json.loads((folder / "sources-fetched.json").read_text(encoding="utf-8"))["sources"]
    assert len(found) > 4, found  # the search found more than the round may read
    assert len(read) == 4 == LOCAL_READS * settings.sources_to_fetch, [s["url"] for s in read]


def test_only_corpus_results_are_read_past_sources_to_fetch() -> None:
    web = [{"url": f"https://example.org/{i}"} for i in range(4)]
    local = [{"url": f"corpus://{i}.md"} for i in range(4)]
    ranked = [web[0], local[0], web[1], web[2], local[1], web[3], local[2], local[3]]
    chosen = [r["url"] for r in _to_fetch(ranked, 3)]
    # the best three whatever they are, then the corpus results left, up to six in all; never a fourth page
    # of the web
    assert chosen == [*(r["url"] for r in ranked[:3]), "corpus://1.md", "corpus://2.md", "corpus://3.md"]
    assert [r["url"] for r in _to_fetch(web, 3)] == [r["url"] for r in web[:3]]


async def test_a_sub_question_one_source_answers_is_an_open_question_in_a_sentence(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "lens.md").write_text(
        "# Lighthouse lens\n\nThe lens of a lighthouse gathers the lamp's light into a beam. Prisms above "
        "and below the lens bend stray light into the beam, so the light reaches far out to sea.\n"
    )
    settings = corpus_settings(tmp_path, docs)
    async with open_engine(settings) as engine:
        run = await engine.create_run("How does a lighthouse lens gather light into a beam?")
        final = await engine.execute(run.run_id)
    assert final.status == "completed", final.error
    body = (settings.workspace_dir / (final.artifact_dir or "") / "deepresearch-report.md").read_text()
    opens = body.split("## Open questions", 1)[1].split("## Recommendations", 1)[0]
    # one page answers: said once (the critic's "Only one source holds evidence on: ..." and the last
    # reflection's "Fewer than two independent sources answer ..." are the same open question), as a sentence
    # (the reflection's read "fewer than two independent sources for: ...")
    items = [line[2:] for line in opens.splitlines() if line.startswith("- ")]
    assert [i for i in items if "How does a lighthouse lens" in i] == [
        "Only one source holds evidence on: How does a lighthouse lens gather light into a beam?"
    ], opens
    assert all(item[:1].isupper() for item in items), opens


def test_the_grammar_check_reads_an_auxiliary_put_before_its_subject() -> None:
    # "The tide table is empty. Why?" asks "Why is the tide table empty?": the subject and what follows it
    # stand side by side only once "is" moves, which is no keyword soup; a negated auxiliary is one too
    question = "The tide table is empty and the harbour crane won't lift the dinghy. Why?"
    assert grammar_problems("Why is the tide table empty?", question) == []
    assert grammar_problems("Why won't the harbour crane lift the dinghy?", question) == []
    # words strung together from different places still are
    assert grammar_problems("Why is the tide crane empty?", question) == [
        "keywords strung together ('tide crane empty')"
    ]
    assert "no auxiliary verb after the question word" in grammar_problems("Why the crane lift?", question)
