"""The extractive engine's general methods (issue [quality] part 2), each on a small real input:
boilerplate and duplicate documents found by content, the page titled with the question's subject ranked
first, topics that are noun phrases, definitions, lists and FAQ questions quotable with what names their
subject, and a report that places each quote under the question it answers. The figures over whole manuals
are measured by bench/quality (docs/quality.md), not here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.quality.grammar import grammar_problems
from deepresearch.extractive.asking.phrases import verbs
from deepresearch.extractive.asking.planning import keyword_plan, question_topic
from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import content_tokens, heading_passages, split_sentences
from deepresearch.report.digest import NO_OTHER_RISKS, NO_RISKS, extractive_report_body
from deepresearch.report.lines import cite
from deepresearch.report.render import check_citations, render_html, sources_markdown
from deepresearch.search.corpus import CorpusIndex
from deepresearch.search.documents import extract_text

FOOTER = "<p>Copyright 2026 The Example Foundation. Licensed under the Example License.</p>"
NAV = "<p>Home | Modules | Directives | Sitemap</p>"


def _page(title: str, body: str) -> str:
    return f"<html><head><title>{title}</title></head><body>{NAV}<h1>{title}</h1>{body}{FOOTER}</body></html>"


# --- the corpus: boilerplate and copies -------------------------------------------------------------
async def test_repeated_blocks_and_notices_are_left_out_and_copies_are_no_results(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    topics = ["lighthouses", "tides", "harbours", "beacons", "buoys", "ferries", "anchors", "sails"]
    for topic in topics:
        body = "".join(
            f"<p>Chapter {i} on {topic}: the {topic} of this coast guide ships past rock number {i} at night,"
            f" and sailors learn the {topic} by heart before their first voyage along the shore.</p>"
            for i in range(8)
        )
        (root / f"{topic}.html").write_text(_page(topic.title(), body))
    # the page's markup source next to it (the same text in other markup), and a fragment a page includes
    lines = [f"Chapter {i} on lighthouses: the lighthouses of this coast guide ships past rock number {i} at"
             f" night, and sailors learn the lighthouses by heart before their first voyage along the shore."
             for i in range(8)]  # fmt: skip
    (root / "lighthouses.txt").write_text("Lighthouses\n===========\n\n" + "\n\n".join(lines) + "\n")
    fragment = " ".join(
        f"Step {i}: a keeper trims the wick of lamp {i} every evening and winds the clockwork that turns"
        f" lens {i}."
        for i in range(8)
    )
    (root / "keeper-fragment.txt").write_text(fragment + "\n")
    (root / "keepers.html").write_text(
        _page("Keepers", f"<p>{fragment}</p><p>Keepers lived in the tower.</p>")
    )
    index = CorpusIndex(tmp_path / "index.db", root)
    await index.reindex()

    document = await index.read("corpus://tides.html")
    assert "the tides of this coast guide ships" in document.text
    assert "Copyright" not in document.text and "Licensed under" not in document.text
    assert "Sitemap" not in document.text  # on every page: navigation, not content
    hits = [h.url for h in await index.search("lighthouses guide ships past rock at night", 5)]
    assert hits[0] == "corpus://lighthouses.html" and "corpus://lighthouses.txt" not in hits
    keeper = [h.url for h in await index.search("keeper trims the wick clockwork lens", 5)]
    assert keeper == ["corpus://keepers.html"]


async def test_the_page_titled_with_the_subject_wins_over_one_that_repeats_its_words(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "vacuum.html").write_text(
        _page(
            "VACUUM", "<p>The VACUUM command rebuilds the database file into a minimal amount of space.</p>"
        )
    )
    changes = "".join(
        f"<li>Fix a vacuum problem number {i} with vacuum and the vacuum command.</li>" for i in range(12)
    )
    (root / "changes.html").write_text(_page("Release history", f"<ul>{changes}</ul>"))
    (root / "datatypes.html").write_text(
        _page("Datatypes", "<p>Each value stored in a column has a storage class, not the column.</p>")
    )
    index = CorpusIndex(tmp_path / "index.db", root)
    await index.reindex()
    assert (await index.search("What does VACUUM do?", 3))[0].url == "corpus://vacuum.html"
    # a title word that is a compound of a query word names it in part
    assert (await index.search("type of a value stored in a column", 3))[0].url == "corpus://datatypes.html"


# --- planning: topics are noun phrases ------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("Why should I avoid paper maps when I can buy a satellite receiver?", "paper maps"),
        ("How does the harbour master decide which ship docks first?", "the harbour master"),
        ("What goes wrong when two old ships are towed repeatedly with short ropes?", "short ropes"),
        ("How do the sloop, ketch and schooner rigs differ?", "the sloop, ketch and schooner rigs"),
        ("Why are my lantern batteries so weak in winter?", "lantern batteries"),
    ],
)
def test_the_topic_is_a_noun_phrase_of_the_question(question: str, topic: str) -> None:
    assert question_topic(question) == topic


def test_sub_questions_ask_about_the_topic_in_plain_grammar() -> None:
    question = "How do the sloop, ketch and schooner rigs differ?"
    plan = keyword_plan(question, max_queries=4)
    assert plan.sub_questions[1:] == [
        "What is the sloop rig?",
        "What is the ketch rig?",
        "What is the schooner rig?",
    ]
    assert "sloop rig" in plan.queries  # each thing compared is searched on its own
    for sub_question in plan.sub_questions:
        assert grammar_problems(sub_question, question) == [], sub_question
    # no "What is avoid?": a verb is never the topic, and a limitations aspect is no search query
    avoid = keyword_plan("Why should I avoid paper maps when I can buy a satellite receiver?", 4)
    assert not any("avoid?" in sq for sq in avoid.sub_questions)
    assert not any("limitation" in q.lower() for q in avoid.queries)


def test_rarity_in_the_corpus_picks_the_specific_phrase() -> None:
    question = "How does Harbourd decide which berth a tanker gets?"
    shares = {"harbourd": 0.98, "berth": 0.04, "tanker": 0.2}
    assert question_topic(question, shares) == "berth"
    assert verbs("How does Harbourd decide which berth a tanker gets")[0] == "decide"
    assert verbs("Why are my lantern batteries so weak") == []  # a predicate is what is asked, not a verb


# --- quotable units ---------------------------------------------------------------------------------
def _units(html: str, key: str) -> list[tuple[str, str]]:
    text = extract_text(Path("page.html"), html.encode()).text
    passage = next(p for p in heading_passages(text) if key in p.text)
    return [(u.section, u.text) for u in quotes(passage.text, 1, passage.headings)]


def test_a_definition_is_quoted_under_its_term() -> None:
    html = _page(
        "Knots",
        "<h2>OPTIONS</h2><dl><dt>--tight</dt><dd><p>Pulls the rope until the knot cannot slip at all.</p>"
        "</dd><dt>--loose</dt><dd><p>Leaves enough slack for the knot to be untied by hand.</p></dd></dl>",
    )
    assert ("--tight", "Pulls the rope until the knot cannot slip at all.") in _units(html, "--tight")


def test_a_table_of_contents_or_see_also_list_is_never_quoted() -> None:
    entries = "".join(
        f"<li><a href='#{i}'>How to check the tides before a voyage along the coast number {i}</a></li>"
        for i in range(4)
    )
    html = _page(
        "Tides",
        f"<h2>Table of Contents</h2><ul>{entries}</ul><h2>See also</h2><p>The harbour master's guide "
        "explains how the tides are measured at every pier of the coast.</p>"
        "<h2>Reading the tides</h2><p>The tide rises twice a day because the moon pulls the water of the "
        "sea towards it.</p>",
    )
    assert _units(html, "coast number 1") == []
    assert _units(html, "harbour master") == []
    assert _units(html, "twice a day") == [
        (
            "Reading the tides",
            "The tide rises twice a day because the moon pulls the water of the sea towards it.",
        )
    ]


def test_a_list_announced_by_a_sentence_is_one_quote_with_it() -> None:
    html = _page(
        "Tides",
        "<h2>Order</h2><p>The order of the tides is:</p><ul><li>&lt;High&gt; water at noon</li>"
        "<li>&lt;Low&gt; water at dusk</li><li>&lt;High&gt; water at midnight</li></ul>",
    )
    units = _units(html, "order of the tides")
    assert (
        "Order",
        "The order of the tides is: <High> water at noon; <Low> water at dusk; <High> water at midnight.",
    ) in units


def test_a_bold_paragraph_heads_what_follows_like_a_faq_question() -> None:
    html = _page(
        "FAQ",
        "<p><b>(7) Why is the lamp so dim?</b></p><blockquote>The lamp burns whale oil, which gives a yellow"
        " light. Modern lamps burn kerosene instead.</blockquote>",
    )
    text = extract_text(Path("faq.html"), html.encode()).text
    assert "##### (7) Why is the lamp so dim?" in text
    units = _units(html, "whale oil")
    assert units[0] == (
        "(7) Why is the lamp so dim?",
        "The lamp burns whale oil, which gives a yellow light.",
    )


def test_a_section_opening_this_module_is_quoted_under_the_page_subject() -> None:
    html = _page(
        "Apache MPM prefork",
        "<h3>Summary</h3><p>This Multi-Processing Module implements a non-threaded, pre-forking web server."
        " It is appropriate for sites that need to avoid threading.</p>",
    )
    units = _units(html, "non-threaded")
    assert (
        "Apache MPM prefork",
        "This Multi-Processing Module implements a non-threaded, pre-forking web server.",
    ) in units
    # "It is appropriate ..." leans on the sentence before: quoted with it, never alone
    assert not any(text.startswith("It ") for _, text in units)


def test_connective_openers_and_pointers_are_never_quoted_alone() -> None:
    passage = (
        "The keeper lights the lamp at dusk. However, the lamp stays dark when the fog horn sounds.\n\n"
        "See the chapter on fog for the details of the horn.\n\n"
        "Consult the harbour master's handbook for further details on the horn.\n\n"
        "More info in the official lighthouse board circular number twelve."
    )
    texts = [u.text for u in quotes(passage, 1)]
    assert (
        "The keeper lights the lamp at dusk. However, the lamp stays dark when the fog horn sounds." in texts
    )
    assert not any(t.startswith(("However", "See ", "Consult ", "More info")) for t in texts), texts
    assert split_sentences("Read about Name-based vs. IP-based hosts to decide. Then go.") == [
        "Read about Name-based vs. IP-based hosts to decide.",
        "Then go.",
    ]
    assert "[l]" in content_tokens("a RewriteRule with the [L] flag")
    # an abbreviation in brackets ends no sentence: "(i.e. B)" was cut into "... moved up (i.e." and "B) ..."
    assert split_sentences("The lines moved up (i.e. B) go to the parent. Then go.") == [
        "The lines moved up (i.e. B) go to the parent.",
        "Then go.",
    ]
    # a code sample in backticks is never cut: "`git log v2.5.. Makefile`" was quoted as
    # "`$ git log v2.5. [1]. Makefile`" (a sentence end at "v2.5.", and the citation inside the sample)
    sample = "It finds the commits: `$ git log v2.5.. Makefile fs/`. Then go."
    assert split_sentences(sample) == ["It finds the commits: `$ git log v2.5.. Makefile fs/`.", "Then go."]
    assert cite({"statement": sample.split(" Then")[0], "citations": [1]}).count("[1]") == 1
    # a sentence that points back to a place in the text ("the code above") is quoted with what it points at
    texts = [
        u.text
        for u in quotes(
            "The keeper writes the date in the log at dusk. The code above then adds the hour.", 1
        )
    ]
    assert texts == ["The keeper writes the date in the log at dusk. The code above then adds the hour."]
    # a list item that announces a sample ends the quoted list without its colon ("... 2 seconds:.")
    duties = (
        "The keeper has two duties each night:\n\n- He trims the wick.\n- He winds the clock and waits:\n"
    )
    assert [u.text for u in quotes(duties, 1)] == [
        "The keeper has two duties each night: He trims the wick; He winds the clock and waits."
    ]
    # "And ..." goes on from the sentence before: quoted with it, never alone
    texts = [u.text for u in quotes("Each beam has a range in miles. And the default range is forty.", 1)]
    assert "Each beam has a range in miles. And the default range is forty." in texts, texts
    assert not any(t.startswith("And ") for t in texts), texts
    # "Instead of X, ..." names what it stands instead of and opens a quote of its own (git-describe's "--all:
    # Instead of using only the annotated tags, use any ref ..." was dropped); "Instead, ..." and "Instead of
    # that, ..." lean on the sentence before
    flare = "the relief keeper lights a flare at the gallery door when the fog rolls in."
    assert [u.text for u in quotes(f"Instead of ringing the bell, {flare}", 1)] == [
        f"Instead of ringing the bell, {flare}"
    ]
    assert [u.text for u in quotes(f"Instead, {flare}", 1)] == []
    assert [u.text for u in quotes(f"Instead of that, {flare}", 1)] == []
    # "Both X and Y ...", "Either X or Y ...", "Those who ..." name what they stand for after the first word;
    # "Both are ..." and "Both lamps are ..." stand for what came before
    for named in (
        "Both the lamp and the lens are cleaned by the keeper every morning before dawn.",
        "Either the keeper or his relief must stay in the lantern room through the night.",
        "Those who keep the light must write every ship they sight in the log.",
    ):
        assert [u.text for u in quotes(named, 1)] == [named]
    for leaning in (
        "Both are cleaned by the keeper every morning before dawn.",
        "Both lamps are cleaned every morning before dawn and at dusk.",
    ):
        assert [u.text for u in quotes(leaning, 1)] == []


def test_a_sentence_keeps_its_closing_bracket_and_its_citation() -> None:
    # the closing parenthesis stays with its sentence (unbalanced, it would never be quoted), and a citation
    # marker after "etc.)" ends that sentence rather than starting one: the report's check read the quote
    # as "... (CD, email, etc." and an empty "[1]." and marked it unverified
    text = 'Move data by other means (CD, email, etc.). He said "stop." Then he left.'
    assert split_sentences(text) == [
        "Move data by other means (CD, email, etc.).",
        'He said "stop."',
        "Then he left.",
    ]
    assert split_sentences("Move data by other means (CD, email, etc.) [1]. Then go [2].") == [
        "Move data by other means (CD, email, etc.) [1].",
        "Then go [2].",
    ]
    # a section named with Markdown's own characters is shown as code, not read as emphasis ("*dataclass(*")
    labelled = cite(
        {"statement": "It makes a class.", "citations": [1], "section": "dataclass(*, init=True)"}
    )
    assert labelled == "`dataclass(*, init=True)`: It makes a class [1]."
    options = cite({"statement": "It runs.", "citations": [2], "section": "OPTIONS"})
    assert options == "*OPTIONS*: It runs [2]."
    line = "- " + cite({"statement": text.split(" He")[0], "citations": [1]})
    checked, check = check_citations(line, {1: [text]}, set())
    assert checked == "- Move data by other means (CD, email, etc.) [1]." and check.unverified_sentences == 0


# --- the report --------------------------------------------------------------------------------------
def _finding(sub_question: str, statement: str, n: int, score: float, order: int) -> dict[str, Any]:
    return {
        "sub_question": sub_question,
        "statement": statement,
        "citations": [n],
        "section": "",
        "score": score,
        "order": [order, 0],
    }


def test_quotes_go_under_the_question_they_answer_and_sources_are_split() -> None:
    main, limits = "How does a lighthouse lens work?", "What are the limitations of a lighthouse lens?"
    state: dict[str, Any] = {
        "engine": "extractive",
        "plan": {"sub_questions": [main, limits]},
        "sources": [
            {"n": 1, "url": "corpus://lens.html", "title": "Lens"},
            {"n": 2, "url": "corpus://fog.html", "title": "Fog"},
        ],
        "evidence": [{"sub_question": main}, {"sub_question": limits}],
        "findings": {
            "fact_reviewer": {
                "findings": [
                    _finding(main, "The lens gathers the lamp's light into a beam.", 1, 0.9, 0),
                    _finding(
                        main, "Prisms above and below the lens bend stray light into the beam.", 1, 0.8, 1
                    ),
                ]
            },
            "implication_reviewer": {"findings": []},
            "risk_reviewer": {
                "findings": [
                    _finding(limits, "In thick fog the beam cannot reach far, at most a mile.", 1, 0.7, 2)
                ]
            },
        },
    }
    body = extractive_report_body(state)
    findings, rest = body.split("## Findings")[1].split("## Disagreements and risks")
    assert f"### {limits}" in findings and "at most a mile" in findings.split(f"### {limits}")[1]
    assert "Nothing beyond the summary above" not in body
    # a stated limit is no danger, but the section says where the limits are rather than "none found" alone
    assert NO_OTHER_RISKS.format(f"\u201c{limits}\u201d") in rest
    markdown = sources_markdown(state["sources"], {1})
    cited, also = markdown.split("### Also read")
    assert "[1] Lens" in cited and "[2] Fog" in also
    html = render_html(f"See [1].\n\n{markdown}", "q", {"corpus://lens.html", "corpus://fog.html"})
    assert 'id="source-1"' in html and 'id="source-2"' in html


def test_the_risks_section_names_every_sub_question_that_quoted_limits() -> None:
    main = "How does a lighthouse lens work?"
    lens, lamp = (
        "What are the limitations of a lighthouse lens?",
        "What are the drawbacks of a paraffin lamp?",
    )
    state: dict[str, Any] = {
        "engine": "extractive",
        "plan": {"sub_questions": [main, lens, lamp]},
        "sources": [{"n": 1, "url": "corpus://lens.html", "title": "Lens"}],
        "evidence": [{"sub_question": q} for q in (main, lens, lamp)],
        "findings": {
            "fact_reviewer": {
                "findings": [_finding(main, "The lens gathers the lamp's light into a beam.", 1, 0.9, 0)]
            },
            "implication_reviewer": {"findings": []},
            "risk_reviewer": {
                "findings": [
                    _finding(lens, "In thick fog the beam cannot reach far, at most a mile.", 1, 0.7, 1),
                    _finding(
                        lamp, "A paraffin lamp needs its wick trimmed every evening, at the least.", 1, 0.6, 2
                    ),
                ]
            },
        },
    }
    rest = extractive_report_body(state).split("## Disagreements and risks")[1]
    assert NO_OTHER_RISKS.format(f"\u201c{lens}\u201d and \u201c{lamp}\u201d") in rest, rest


def test_the_risks_section_points_at_a_risk_quoted_above_instead_of_saying_none() -> None:
    main = "Why does a lighthouse keep a log?"
    state: dict[str, Any] = {
        "engine": "extractive",
        "plan": {"sub_questions": [main]},
        "sources": [{"n": 1, "url": "corpus://log.html", "title": "Log"}],
        "evidence": [{"sub_question": main}],
        "findings": {
            "fact_reviewer": {
                "findings": [
                    _finding(main, "The keeper writes each lamp lighting into the log.", 1, 0.9, 0),
                    _finding(main, "The remaining risk of a dark night is a lamp nobody relit.", 1, 0.8, 1),
                ]
            },
            "implication_reviewer": {"findings": []},
            "risk_reviewer": {"findings": []},
        },
    }
    body = extractive_report_body(state)
    above, rest = body.split("## Disagreements and risks")
    assert "The remaining risk of a dark night" in above
    # the fact reviewer quoted a stated risk: "no fetched passage states a warning" would be false
    assert NO_RISKS not in rest
    assert "None listed beyond what is quoted under" in rest and "\u201cSummary\u201d" in rest, rest


def test_an_it_or_there_that_stands_for_what_follows_opens_a_quote_of_its_own() -> None:
    # "It is an error to ..." opening a section was dropped as leaning on an unseen sentence; its "it" stands
    # for the clause after it, as "There is no ..." points at nothing before
    section = (
        "It is an error to light the lamp before the keeper has trimmed the wick.\n\n"
        "There is no way to dim the lamp once the clockwork has been wound."
    )
    texts = [u.text for u in quotes(section, 1)]
    assert texts == [
        "It is an error to light the lamp before the keeper has trimmed the wick.",
        "There is no way to dim the lamp once the clockwork has been wound.",
    ]
    # ... and so does one after a sentence that cannot be quoted (a caption, a sample)
    texts = [u.text for u in quotes(f"Lamp oil.\n\n{section}", 1, ("Lamp",))]
    assert texts[0] == "It is an error to light the lamp before the keeper has trimmed the wick.", texts
    # ... but an "it" that names a thing still needs its antecedent, and goes with it when there is one; so
    # does a "there" that names a place
    for thing in (
        "It is used to store the spare wicks of the lamp in the tower.",
        "It is safe to call from any tower once the lamp has been lit.",
        "It is likely to be removed from the tower before the next winter.",
        "There is the room that holds the spare wicks of every lamp.",
    ):
        assert quotes(thing, 1) == [], thing
    texts = [
        u.text for u in quotes("The lamp burns paraffin oil all night. It is used to warn the ships.", 1)
    ]
    assert texts == ["The lamp burns paraffin oil all night. It is used to warn the ships."]
    # a place pointed at inside an aside leaves the sentence whole; outside one it does not
    aside = "When the clock stops (as in the example above), the keeper winds it again before dusk."
    assert [u.text for u in quotes(aside, 1)] == [aside]
    assert quotes("As in the example above, the keeper winds the clock again before dusk.", 1) == []


def test_a_reference_pages_default_field_is_a_quote_under_its_setting() -> None:
    # "Default: RequestReadTimeout handshake=0 header=20-40,..." is no sentence and was never quoted, though
    # "what is the default?" is what a reader of a setting's section asks
    section = (
        "## LampWick Directive\n\n"
        "Description: Sets how long the wick of the lamp may burn before the keeper trims it.\n\n"
        "Default: LampWick hours=6,trim=on\n\n"
        "Context: tower config"
    )
    texts = [u.text for u in quotes(section, 1, ("mod_lamp", "LampWick Directive"))]
    assert "Default: `LampWick hours=6,trim=on`" in texts, texts
    assert not any(t.startswith("Context") for t in texts), texts
    # a default of nothing, or one outside any section naming its setting, says nothing worth a finding
    assert quotes("## LampFog Directive\n\nDefault: none", 1, ("mod_lamp", "LampFog Directive")) == []
    assert quotes("Default: LampWick hours=6", 1) == []


def test_an_announcing_sentence_states_something_alone_when_its_list_is_too_long_to_quote_with_it() -> None:
    # "... because always is not a superset of onsuccess with respect to existing headers:" was lost with its
    # three long items; "There are three ways to ...:" says nothing without them, and stays out
    tail = " and the keeper writes it down in the tower's log book before the relief keeper arrives at dawn"
    items = "".join(
        f"- You're {what} a lamp that another keeper lit, in which case only the wick is used{tail}.\n"
        for what in ("adding oil to", "trimming the wick of", "changing the mantle of")
    )
    stated = (
        "Note also that lighting the lamp twice makes sense on some nights because the wick is not a superset"
        " of the mantle with respect to the oil:"
    )
    texts = [u.text for u in quotes(f"{stated}\n\n{items}", 1, ("Lamp", "Keeping the lamp"))]
    assert f"{stated} …" in texts, texts  # what it announces elided, its colon kept
    assert len(texts) == 4 and not any(t.endswith(":") for t in texts), texts
    # an existential "there" states something too; counting what the list holds does not
    many = "There are many lamps that the keeper of the tower lights every single night:"
    texts = [u.text for u in quotes(f"{many}\n\n{items}", 1, ("Lamp", "Keeping the lamp"))]
    assert f"{many} …" in texts, texts
    counted = "There are three ways to keep the lamp of the tower burning through a long night:"
    texts = [u.text for u in quotes(f"{counted}\n\n{items}", 1, ("Lamp", "Keeping the lamp"))]
    assert len(texts) == 3 and not any(t.startswith("There are") for t in texts), texts
    # what stops short of a statement: each rejected by one rule alone
    for short in (
        "The keeper lights the lamp at dusk:",  # too short to say something whole
        "The values that the keeper may choose for the lamp include:",  # ends on a word that announces
        "The lamp settings listed here are read by the keeper when the tower opens:",  # names its list
        "The keeper looks for oil in the rooms that the tower plan lists, which it reads from:",  # "from"
    ):
        texts = [u.text for u in quotes(f"{short}\n\n{items}", 1, ("Lamp", "Keeping the lamp"))]
        assert len(texts) == 3, (short, texts)
