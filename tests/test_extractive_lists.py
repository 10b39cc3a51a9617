"""Lists in documentation (issue [quality] part 2): a list whose items complete the sentence before it, a list
of names each with its definition, and a list cut from the sentence that announces it when a section is
split into passages. Invented domains, so nothing here is tuned on the quality sets."""

from __future__ import annotations

from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import heading_passages
from deepresearch.extractive.screening import passages_of
from deepresearch.graph.gather import _evidence
from deepresearch.report.findings import extractive_review

FILLER = "The harbour office keeps a copy of every chart that the pilots use on their daily rounds. " * 7


def test_items_that_complete_a_sentence_are_quoted_with_it() -> None:
    passage = (
        "This directive enables the tide alarm. When enabled, keep in mind that\n\n"
        "- the bell rings for every tide above the mark, which wakes the whole quay at night.\n\n"
        "- the keeper must reset it by hand after each storm.\n"
    )
    texts = [q.text for q in quotes(passage, 1)]
    assert (
        "When enabled, keep in mind that the bell rings for every tide above the mark, which wakes the whole "
        "quay at night; the keeper must reset it by hand after each storm." in texts
    ), texts
    # too long for one unit: each item is quoted with the sentence it completes
    long_item = "the bell rings for every tide above the mark, " + "and again when the wind turns, " * 12
    texts = [q.text for q in quotes(f"If the alarm is on,\n\n- {long_item}night.\n\n- {long_item}day.\n", 1)]
    assert texts and all(t.startswith("If the alarm is on, ") for t in texts), texts
    # ... the second after "…": the item before it is left out
    assert [t[20:40] for t in texts] == ["the bell rings for e", "… the bell rings for"][: len(texts)], texts
    # sentences of their own after a comma do not complete it: each is quoted alone
    texts = [
        q.text
        for q in quotes("For example,\n\n- The bell rings at high tide.\n\n- The keeper resets it.\n", 1)
    ]
    assert texts == ["The bell rings at high tide."], texts
    # a line that stops on a full stop announces nothing: its list's fragments are no quotes
    assert not quotes(
        "The alarm has two modes.\n\n- loud bell at the quay\n\n- quiet lamp in the office\n", 1
    )


def test_a_list_of_names_quotes_each_definition_under_its_name() -> None:
    routines = {
        "crane_open()": "Open a connection to a crane that stands on the quay or in the dry dock.",
        "crane_lift()": "Raise the load on the hook to the height given in the last order.",
        "crane_turn()": "Swing the jib towards the berth named in the order slowly.",
        "crane_drop()": "Lower the load onto the quay and release the hook at once.",
        "crane_close()": "Release every lock the connection holds and close it for good each evening.",
        "crane_park()": "Move the jib over the quay and lower the hook to its resting place for the night.",
        "crane_test()": "Run the daily safety test of the brakes, the cable and the limit switches in order.",
    }
    passage = "The essential routines of the crane interface are these:\n\n" + "".join(
        f"- {name} → {text}\n\n" for name, text in routines.items()
    )
    units = {q.section: q.text for q in quotes(passage, 1)}
    assert units.get("crane_lift()") == routines["crane_lift()"], units
    assert units.get("crane_open()", "").startswith("Open a connection"), units
    # a remark is no name: "Note: ..." stays under the section's heading
    notes = "\n\n".join(f"- Note: {text} {text}" for text in routines.values())
    labels = {q.section for q in quotes(f"Remarks on the crane:\n\n{notes}\n", 1, ["Crane", "Remarks"])}
    assert labels == {"Remarks"}, labels


def test_a_list_of_fragments_stays_in_the_passage_of_the_sentence_that_announces_it() -> None:
    section = (
        f"## Recovering a stuck winch\n\n{FILLER}\n\n"
        "When the winch stops in the middle, you can recover from this in one of two ways:\n\n"
        "- skip the current load by running the winch again with the skip lever pulled down.\n\n"
        "- free the cable by hand, wind it back on the drum and run the winch with the resume lever.\n\n"
        f"{FILLER}"
    )
    passages = [p.text for p in heading_passages(section)]
    announcing = next(p for p in passages if "in one of two ways:" in p)
    assert "free the cable by hand" in announcing and "skip the current load" in announcing, passages
    units = [q.text for q in quotes(announcing, 1)]
    assert any("one of two ways: skip the current load" in u and "resume lever" in u for u in units), units
    # the search index cuts its passages its own way (its cut is part of INDEX_VERSION)
    cut = [p.text for p in heading_passages(section, whole_lists=False)]
    assert not any("in one of two ways:" in p and "free the cable by hand" in p for p in cut), cut


def test_a_sample_stays_in_the_passage_of_the_sentence_that_announces_it() -> None:
    # git-tag(1): "... by making a very public announcement saying:" at a passage's end, its sample the next
    # passage's start - quoted nowhere
    sample = "`" + "Ok, I wound the winch back by hand and the load is on the quay again. " * 6 + "`"
    called = f"Tell the crew by calling out:\n\n{sample}"
    section = f"## Announcing a stuck winch\n\n{FILLER}\n\n{called}\n\n{FILLER}"
    passages = [p.text for p in heading_passages(section)]
    assert any("calling out:" in p and "on the quay again." in p for p in passages), passages
    cut = [p.text for p in heading_passages(section, whole_lists=False)]
    assert not any("calling out:" in p and "on the quay again." in p for p in cut), cut


def test_a_list_of_sentences_is_cut_like_prose() -> None:
    # items that are sentences of their own read as well on their own: the section is cut as before
    section = f"## Why the quay floods\n\n{FILLER}\n\nThe quay floods for these reasons:\n\n" + "".join(
        f"- The {w} tide rises above the wall when the wind blows from the sea.\n\n" for w in "abcdef"
    )
    glued = [p.text for p in heading_passages(section)]
    assert glued == [p.text for p in heading_passages(section, whole_lists=False)]


def test_items_of_a_list_announced_before_the_passage_are_no_quotes_of_their_own() -> None:
    # a passage cut after "... may not be used:" starts with the list's items; those that open on a
    # preposition complete the announcement and say nothing alone; an item that is a sentence still counts
    passage = (
        "- In the harbour log of the northern lighthouse.\n\n"
        "- On the brass plate of the lantern room door.\n\n"
        "- In fog, the keeper sounds the horn once every minute.\n\n"
        "- The keeper writes every passing ship into the log."
    )
    texts = [u.text for u in quotes(passage, 1)]
    assert "In fog, the keeper sounds the horn once every minute." in texts, texts
    assert "The keeper writes every passing ship into the log." in texts, texts
    assert not any(t.startswith(("In the harbour", "On the brass")) for t in texts), texts
    # announced in the same passage, they are quoted with their announcement as before
    announced = "The keeper's name may not be written:\n\n" + passage.split("\n\n- In fog")[0]
    assert [u.text for u in quotes(announced, 1)] == [
        "The keeper's name may not be written: In the harbour log of the northern lighthouse; "
        "On the brass plate of the lantern room door."
    ]


def test_a_table_row_is_no_sample_of_the_sentence_that_announces_it() -> None:
    """A Markdown table after "...:" was quoted as the sample the sentence announces ("every part optional:
    `| field | effect | runs again from |`"); a short command after one still is."""
    passage = (
        "The lamp's log, every column optional:\n\n"
        "| column | meaning |\n|---|---|\n| `lit` | when the keeper lit the lamp |\n\n"
        "To trim the wick every evening:\n\n"
        "trim --wick --length 2mm\n\n"
        "A keeper who logs every lighting can show the inspector when the lamp was dark."
    )
    texts = [q.text for q in quotes(passage, 1, ["Lamps", "Logs"])]
    assert not any("|" in text for text in texts), texts
    assert "To trim the wick every evening: `trim --wick --length 2mm`" in texts, texts
    assert texts[-1].startswith("A keeper who logs every lighting"), texts


def test_an_announcing_sentence_that_leans_back_is_quoted_with_what_it_leans_on_or_not_at_all() -> None:
    # "This means ...:" opening its paragraph, quoted alone with its sample, read as a finding whose "this"
    # no reader could place
    before = "In the harbour office the charts are filed by the depth of the channel they show."
    intro = "This means a pilot must ask for a channel by its depth:"
    sample = "shelf 3: charts of channels deeper than ten fathoms"
    texts = [q.text for q in quotes(f"{before}\n\n{intro}\n\n{sample}\n", 1)]
    assert texts == [f"{before} {intro} `{sample}`"], texts
    # ... the same with a list it announces
    listed = "\n\n- the depth of the channel\n\n- the tide it was sounded at\n"
    texts = [q.text for q in quotes(f"{before}\n\nThis means a pilot must give:{listed}", 1)]
    assert texts == [
        f"{before} This means a pilot must give: the depth of the channel; the tide it was sounded at."
    ]
    # what it leans on is no quote (a code line): it is none either
    alone = [q.text for q in quotes(f"`file-charts --depth`\n\nThis means a pilot must give:{listed}", 1)]
    assert not any(t.startswith("This means") for t in alone), alone
    alone = [q.text for q in quotes(f"`file-charts --depth`\n\n{intro}\n\n{sample}\n", 1)]
    assert not any(t.startswith("This means") for t in alone), alone
    # a sentence that leans in form only ("It is best to ...") still announces on its own
    texts = [q.text for q in quotes(f"It is best to file a new chart at once:\n\n{sample}\n", 1)]
    assert texts == [f"It is best to file a new chart at once: `{sample}`"], texts


def test_an_announcing_sentence_that_links_or_opens_its_section_is_quoted_with_what_it_announces() -> None:
    sample = "lamp-trim --short --square"
    # a connective links a step to the one before without standing for it
    for intro in ("Then cut the wick square with the trimmer:", "For example, to cut a quarter of an inch:"):
        assert [q.text for q in quotes(f"{intro}\n\n{sample}\n", 1)] == [f"{intro} `{sample}`"]
    # "This module ..." at a section's start points at the page's subject
    listed = (
        "This module defines the following tools:\n\n- a trimmer for the wick\n\n- a brush for the glass\n"
    )
    texts = [q.text for q in quotes(listed, 1, ("lamptools — Keeper's tools", "Tools"))]
    assert texts == [
        "This module defines the following tools: a trimmer for the wick; a brush for the glass."
    ], texts


def test_a_description_cut_from_its_term_is_quoted_under_it() -> None:
    # aptitude(8): "--allow-untrusted:" ended one passage and full-upgrade's description opened the next
    # under no term, quoted under the question about safe-upgrade. The passages stay cut as they were (moving
    # the term on cost a dev gold page: bench/quality/JOURNAL.md, session 37); the term goes on as a label.
    terms = {
        f"--{name}:": f"Lower the {name} crane's hook onto the quay slowly and release the load there. " * 3
        for name in ("harbour", "river", "dock", "basin", "pier", "jetty")
    }
    described = (f"{term}\n\n{text.strip()}" for term, text in terms.items())
    section = "## Crane options\n\n" + "\n\n".join(described)
    passages = heading_passages(section)
    cut = [p for p in passages if p.term]
    assert cut and all(p.term in terms and p.text.split("\n\n")[1] == terms[p.term].strip() for p in cut)
    quoted = {q.text: q.section for p in passages for q in quotes(p.text, 1, p.headings, p.term)}
    assert set(quoted.values()) == {term.rstrip(":") for term in terms}, quoted
    for passage in cut:  # without its term, the description opening the passage was no term's
        opening = terms[passage.term].split(". ")[0]
        alone = [q.section for q in quotes(passage.text, 1, passage.headings) if q.text.startswith(opening)]
        assert passage.term.rstrip(":") not in alone, alone
    # an announcement that ends a passage is no term of the next ("... in one of two ways:")
    announced = "When the winch stops in the middle, you can recover from this in one of two ways:"
    after = quotes(
        "The winch turns again once the keeper frees its cable by hand.", 1, ["Winch", "Stops"], announced
    )
    assert [q.section for q in after] == ["Stops"]


def test_the_term_goes_from_the_passages_read_to_the_evidence_and_the_reviewers_label() -> None:
    question = "How do I lower the basin crane's hook onto the quay?"
    terms = {
        f"--{name}:": f"Lower the {name} crane's hook onto the quay slowly and release the load there. " * 3
        for name in ("harbour", "river", "dock", "basin", "pier", "jetty")
    }
    text = "## Crane options\n\n" + "\n\n".join(f"{t}\n\n{d.strip()}" for t, d in terms.items())
    records = passages_of([{"id": "S1", "n": 1, "title": "Cranes", "text": text}])
    assert any(r.get("term") == "--basin:" for r in records), records
    evidence = [_evidence(0, question, record, 1.0, None, "BM25 rank") for record in records]
    findings = extractive_review("fact_reviewer", [question], evidence, question)["findings"]
    basin = [f for f in findings if f["statement"].startswith("Lower the basin crane's hook")]
    assert basin and all(f["section"] == "--basin" for f in basin), findings


def test_a_description_over_several_passages_keeps_its_term_in_each() -> None:
    # aptitude(8): safe-upgrade's description ran on into a third passage, quoted under no term there
    paragraphs = [
        f"The harbour crane lowers load number {i} onto the quay slowly and releases it there at dusk. " * 4
        for i in range(6)
    ]
    text = "## Crane options\n\n--harbour:\n\n" + "\n\n".join(p.strip() for p in paragraphs)
    passages = heading_passages(text)
    assert len(passages) >= 3, passages
    labels = {q.section for p in passages for q in quotes(p.text, 1, p.headings, p.term)}
    assert labels == {"--harbour"}, labels
