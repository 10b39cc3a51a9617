"""A sixteenth reading (the fifteenth's Varnish and R reports read again, and Postfix and HAProxy questions -
bench/quality/JOURNAL.md, session 46): each case is the smallest question or page read wrong there, with its
defect in a comment. Invented lighthouse material."""

from __future__ import annotations

from deepresearch.extractive.asking.comparison import article
from deepresearch.extractive.asking.phrases import noun_phrases
from deepresearch.extractive.asking.planning import keyword_plan
from deepresearch.extractive.reading.sentences import Quote, quotes
from deepresearch.extractive.reading.text import content_tokens, split_sentences
from deepresearch.report.findings import mmr
from deepresearch.report.lines import Ledger


def _phrases(clause: str) -> list[str]:
    return [phrase.text for phrase in noun_phrases(clause)]


def test_two_acts_compared_are_the_things_compared() -> None:
    # "What is the difference between purging and banning in Varnish ...?": "purging" after "between" was
    # taken for a verb, the topic was "banning" alone and purging was never searched nor asked about
    assert _phrases("What is the difference between trimming and polishing in Lampworks") == [
        "trimming and polishing",
        "Lampworks",
    ]
    plan = keyword_plan("What is the difference between trimming and polishing?", 6)
    assert plan.topic == "trimming and polishing", plan
    assert {"What is trimming?", "What is polishing?"} <= set(plan.sub_questions), plan.sub_questions
    # ... an act done to an object is still a verb: the thing is what it is done to
    assert _phrases("without trimming and polishing the lens") == ["the lens"]


def test_each_of_the_things_compared_is_named() -> None:
    # "... and when should I use each?" was asked as "When should I use each with banning?"
    question = "What is the difference between trimming and polishing, and when should I use each?"
    plan = keyword_plan(question, 6)
    assert "When should I use trimming or polishing?" in plan.sub_questions, plan.sub_questions
    plan = keyword_plan("Should I use a Fresnel lens or a mirror, and when should I pick either one?", 6)
    assert "When should I pick a Fresnel lens or a mirror?" in plan.sub_questions, plan.sub_questions


def test_a_list_without_a_verb_is_quoted_with_the_sentence_that_counts_it() -> None:
    # "HTTP purging, banning and forced cache misses." led a Summary alone, the sentence that counts the three
    # mechanisms it names in Findings
    passage = (
        "A keeper can dim the light of the lamp in two ways. Shutters, a smaller wick or a coloured screen. "
        "First, look at the shutters of the lantern room. "
        "The lamp can burn in three modes. The burner keeps every mode lit all night."
    )
    said = [quote.text for quote in quotes(passage, 1)]
    counted = (
        "A keeper can dim the light of the lamp in two ways. Shutters, a smaller wick or a coloured screen."
    )
    assert counted in said, said
    assert "Shutters, a smaller wick or a coloured screen." not in said, said
    # ... a sentence with its own verb after a count is no list of the things counted
    assert "The burner keeps every mode lit all night." in said, said


RISE = (
    "The 'rise' count states that the lamp on the northern cliff of the harbour island will change its state "
    "after <count> consecutive sparks of the striker in the lantern room. It defaults to 2 if unspecified."
)
FALL = RISE.replace("'rise'", "'fall'").replace("sparks", "misfires").replace("2", "3")


def test_the_same_words_said_of_another_name_are_no_copy() -> None:
    # HAProxy's "The "fall" parameter states that a server will be considered as dead after <count> ..." was
    # left out as a near-copy of its "rise" twin: the one the asker needed, with its default of 3
    rise, fall = (text.replace("'", '"') for text in (RISE, FALL))
    ledger = Ledger()
    assert (
        len(set(content_tokens(rise)) & set(content_tokens(fall))) / len(set(content_tokens(rise + fall)))
        >= 0.7
    )
    assert ledger.take(rise) and ledger.take(fall)
    assert not ledger.take(fall.replace("misfires", "misfires  "))  # a copy is still one
    units = [
        Quote(text, 1, "", i, frozenset(content_tokens(text)), "") for i, text in enumerate((rise, fall))
    ]
    assert [quote.text for _, quote in mmr([(0.9, units[0]), (0.8, units[1])], 5)] == [rise, fall]


def test_a_manual_pages_name_opens_a_sentence_in_lower_case() -> None:
    # Postfix's "postscreen(8) does not inspect message content." answered "why not the content?" and was
    # never quoted (no capital), or glued onto the sentence before it
    passage = (
        "The lamp speaks before the ship answers it. lampd(8) does not read the ship's flags at all. "
        "It only counts the flashes."
    )
    assert split_sentences(passage)[:2] == [
        "The lamp speaks before the ship answers it.",
        "lampd(8) does not read the ship's flags at all.",
    ]
    assert "lampd(8) does not read the ship's flags at all. It only counts the flashes." in [
        quote.text for quote in quotes(passage, 1)
    ]
    # ... not a call in a sample ("ntile(2) OVER win", "xStep(4) - add ...")
    assert len(split_sentences("It ends. ntile(2) OVER win. xStep(4) - add it.")) == 1


def test_a_chatty_queue_questions_topic_is_the_queue() -> None:
    # Postfix's "Our ISP's relay was down for a few hours yesterday and now thousands of messages are sitting
    # in the Postfix deferred queue ... How can I see what is stuck in the queue, and should I force Postfix
    # to retry everything right now?" had the topic "stuck", then "retry", "a few hours", "ISP's relay"
    assert _phrases("How can I see what is stuck in the harbour") == ["the harbour"]
    assert _phrases("What is broken in my lamp") == ["my lamp"]
    assert _phrases("What is PRIVATE in lamp_rules") == ["PRIVATE", "lamp_rules"]  # a thing asked for
    assert _phrases("What is speed in the lamp") == ["speed", "the lamp"]  # "-eed" is no participle
    assert _phrases("should I force Lampd to relight everything right now") == ["Lampd"]
    assert _phrases("Our lamp was dark for a few hours yesterday") == ["Our lamp"]
    assert _phrases("I keep the log for 30 days") == ["the log"]
    rarity = {"relay": 0.375, "isp's": 0.0, "isp's relay": 0.0, "ships": 0.75, "lampd deferred harbour": 0.0}
    rarity |= {"deferred harbour": 0.118, "harbour": 0.603, "lampd": 1.0, "deferred": 0.324, "stuck": 0.022}
    rarity |= {"few": 0.243, "hours": 0.088, "dozens": 0.037, "waiting": 0.029, "relight": 0.169}  # Postfix's
    question = (
        "Our ISP's relay was down for a few hours yesterday and now dozens of ships are waiting in the Lampd "
        "deferred harbour. How can I see what is stuck in the harbour, and should I force Lampd to relight "
        "everything right now?"
    )
    assert keyword_plan(question, 6, rarity=rarity).topic == "the Lampd deferred harbour"


def test_what_can_it_ask_of_is_the_subject_before() -> None:
    # HAProxy's "How does a graceful reload work in HAProxy, and can it still drop connections?": "reload" was
    # taken for the verb, and "it" for the chatty context's "a download" ("Can a download still drop ...?")
    assert _phrases("How does a graceful relight work in Lampd") == ["a graceful relight", "Lampd"]
    question = (
        "I'm worried that relighting it strands ships in the middle of a crossing. "
        "How does a graceful relight work in Lampd, and can it still drop flashes?"
    )
    plan = keyword_plan(question, 6, rarity={"crossing": 0.01, "relight": 0.5, "graceful relight": 0.3})
    assert "Can a graceful relight still drop flashes?" in plan.sub_questions, plan.sub_questions
    # ... and how often the asker does something is no thing asked about
    assert _phrases("We change our Lampd configuration several times a day") == ["our Lampd configuration"]


def test_an_acronym_said_as_a_word_takes_a() -> None:
    # Postfix: "What do I need to change so that Postfix relays mail for our LAN?" asked "What is an LAN?"
    plan = keyword_plan(
        "What do I need to change so that Lampd lights ships for our LAN?", 6, rarity={"lan": 0.01}
    )
    assert "What is a LAN?" in plan.sub_questions, plan.sub_questions
    assert article("SMTP server") == "an" and article("HTTP proxy") == "an" and article("NAT gateway") == "a"


def test_the_askers_host_is_no_topic() -> None:
    # Postfix's "We just got a certificate for mail.example.com from Let's Encrypt ... How do I enable TLS in
    # the Postfix SMTP server?": the topic was "mail.example.com", the Summary a client's recipe for it
    question = (
        "We just got a certificate for lamp.example.com and want our Lampd tower to flash to other ships. "
        "How do I enable beacons in the Lampd tower?"
    )
    rarity = {
        "lamp.example.com": 0.081,
        "certificate": 0.132,
        "beacons": 0.294,
        "lampd tower": 0.3,
    }  # Postfix's
    rarity |= {"lampd": 1.0, "tower": 0.757, "ships": 0.199, "flash": 0.1}
    assert keyword_plan(question, 6, rarity=rarity).topic == "beacons"


def test_it_after_a_preposition_is_what_the_clause_names_last() -> None:
    # Postfix's "Our small office mail server runs on a DSL line ... How do I make Postfix send all outgoing
    # mail through the ISP's server and log in to it?" asked "... and log in to our small office mail server
    # runs?": "log" was read into the phrase "the ISP's server and log", and "it" taken from the scene
    assert _phrases("How do I send all flashes through the harbour's tower and log in to it") == [
        "all flashes",
        "the harbour's tower",
    ]
    question = (
        "Our small lamp room runs on a spare battery. "
        "How do I make Lampd send all flashes through the harbour's tower and log in to it?"
    )
    plan = keyword_plan(question, 6)
    assert "and log in to the harbour's tower" in plan.sub_questions[0], plan.sub_questions
