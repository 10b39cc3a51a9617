"""The closed word classes the question chunker (asking/phrases.py) tells words apart by: question words,
auxiliaries, pronouns, determiners, prepositions, conjunctions, adverbs - and the few open lists it needs
(comparatives, nouns in "-er", the nouns of a relation). What is in none of them is a content word. And the
words of a text as the planner and the report read them (`tokens`)."""

from __future__ import annotations

import re


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


WH = _set("what how which why when where who whose")


def _negated(words: str) -> frozenset[str]:
    """The auxiliaries with "n't", written with either apostrophe ("doesn't", "doesn’t")."""
    return frozenset(f"{word}{mark}t" for word in words.split() for mark in ("n'", "n’"))


# "ca" and "wo" are "can't" and "won't" without their "n't"
AUX_DO = _set("do does did can could should would will may might must shall cannot") | _negated(
    "do does did ca could should would wo might must"
)
BE_CONTRACTED = _set("i'm you're we're they're") | _set("i’m you’re we’re they’re")  # "I'm running ..."
AUX_BE = _set("is are was were be been being am") | _negated("is are was were") | BE_CONTRACTED
AUX_HAVE = _set("has have had") | _negated("has have had")
SUBJECT_PRONOUNS = _set("i you we they he she it nobody somebody someone anyone everyone nothing something")
# "I'd like it to send ...", "we've tried", "I'll need": a pronoun with its auxiliary, never a word of a noun
_WHO = ("i", "you", "we", "they", "he", "she", "it")
_CONTRACTED_AUX = {f"{who}'{aux}" for who in _WHO for aux in ("d", "ll", "ve")}
SUBJECT_PRONOUNS |= _CONTRACTED_AUX | {word.replace("'", "’") for word in _CONTRACTED_AUX}
PRONOUNS = (
    _set("me us them him her itself themselves this these those anything everything") | SUBJECT_PRONOUNS
)
POSSESSIVES = _set("my your our their his its")
DETERMINERS = _set("the a an some any each every all no another both either neither")
PREPOSITIONS = _set(
    "of in on at to for from by with about into onto over under after before without between against "
    "during through across via per than as like within upon behind beyond instead outside inside"
)
CONJUNCTIONS = _set("and or but nor")
VERSUS = _set("vs versus")  # joins the things a question compares ("X vs Y"), never two verbs
COORDINATORS = _set("and or vs versus")  # what joins the members of a coordination
SUBORDINATORS = _set("when while if whether because although though unless until since once that")
# a sentence opens on its verb when its first word is none of OPENERS and its second one of AFTER_A_VERB
# ("Specifies the maximum age ...", "Run the command ...": its subject is in the heading)
OPENERS = _set(
    "the a an this that these those it its if when while for in on to as by with all each every some any "
    "no not only most many python always never use note see both either neither"
)
AFTER_A_VERB = _set("the a an true false none whether if")
ADVERBS = _set(
    "not n't never still really actually too very also just only even ever always already yet then there "
    "here now again together usually often sometimes automatically anymore more most less least wrong right "
    "instead so rather twice"
)
NOUNS_LY = _set("family assembly supply reply anomaly rally ally butterfly monopoly italy jelly belly bully")
# verbs that end in -ly: "I apply patches", "I rely on it" (no manner adverb)
VERBS_LY = _set("apply comply imply multiply supply reply rely fly ally tally rally bully")
PARTICLES = _set("up down out off away back")
# a word before "like" that makes it a verb's or an adverb's, not a kind's ("would like", "works like Nginx")
LIKE_VERBS = _set(
    "would should could might feel feels look looks seem seems sound sounds behave behaves act acts"
)
LIKE_VERBS |= _set("work works")
# verbs that take a gerund as their object ("I tried restarting, and ..."; "configure forwarding" does not)
GERUND_VERBS = _set(
    "try tries tried like likes liked love hate prefer enjoy mind consider considered recommend suggest "
    "begin began continue continued"
)
CLOSES = frozenset(",;:?!=")  # punctuation that ends a phrase or a clause (tokens() keeps it as words)
OBJECT_PRONOUNS = _set("me us them him")  # never a subject: the word before them is a verb
INDEFINITE_OBJECTS = _set("everything something anything")  # "retry everything": a verb before them
CAUSATIVES = _set("make let help")
"""... "make Git treat one commit as ...", "let Apache serve the files": a bare verb after its agent."""
# "has been made", "should be used": a participle after one of them is a verb
PERFECT = _set("be been being has have had")
PARTICIPLES = _set("made done built written kept found lost held sent left given taken seen known shown")
QUANTIFIERS = frozenset(["two", "three", "four", "many", "much", "several", "multiple", "same", "other"])
# "thousands of sites", "a couple of directories", "a week of daily backups": a quantity, the noun after "of"
# is what is asked about
QUANTITY_NOUNS = _set(
    "couple lot lots bunch handful dozen dozens hundreds thousands millions billions tons plenty hour hours "
    "day days week weeks month months year years minute minutes second seconds"
    # "a series of keystrokes", "in the middle of my typing": the keystrokes, the typing are the phrase
    " series sequence number kind sort middle beginning"
)
ARTICLES = _set("a an the")
RELATING = ("compar", "differ", "relat", "interact", "correspond")  # verbs of "how does X ... to Y"
COMPARATIVES = _set(
    "faster slower larger smaller bigger better worse safer easier harder cheaper quicker longer shorter"
    " higher lower"
)
# a comparative's "-er" before "than" ("is git merge safer than"), not a noun's ("a better web server than",
# "a rootless container than"): the nouns in "-er" that documentation names most
NOUN_ER = _set(
    "server container user computer player driver manager handler worker buffer header footer folder"
    " filter layer parser compiler browser router cluster controller provider consumer writer reader"
    " number member master character balancer scheduler listener logger loader installer wrapper helper"
    " runner trigger counter pointer marker identifier owner customer order register adapter converter"
    " formatter renderer interpreter debugger profiler tracker linter bundler transformer encoder decoder"
    " other rather another"
)
NUMBERS = _set("one two three four five six seven eight nine ten hundred thousand million")
# "the difference between X and Y", "the drawbacks of X": a relation, what it relates is what is asked about
RELATION_NOUNS = _set(
    "difference differences distinction distinctions relationship comparison tradeoffs tradeoff trade-offs"
    " trade-off advantages advantage disadvantages benefits drawbacks downsides upsides pros cons strengths"
    " weaknesses limitations limits pitfalls caveats risks"
) | {"pros and cons", "advantages and disadvantages", "benefits and drawbacks", "strengths and weaknesses"}
# "What's the right way?": a question word or a pronoun with its verb, no noun
CONTRACTED = _set("what's who's where's how's when's why's that's it's there's here's let's")
CONTRACTED |= {word.replace("'", "’") for word in CONTRACTED}
FUNCTION_WORDS = (
    WH | AUX_DO | AUX_BE | AUX_HAVE | PRONOUNS | POSSESSIVES | DETERMINERS | PREPOSITIONS
    | CONJUNCTIONS | VERSUS | SUBORDINATORS | ADVERBS | PARTICLES | CONTRACTED
)  # fmt: skip
# "the with statement", "for loops": a keyword named as such is a content word there
KEYWORD_KIND = _set("statement statements keyword keywords clause clauses loop loops operator operators")
# "We sold the boat last year", "I deleted a branch yesterday": a time said in passing is no word of a noun
# phrase (not "the last commit", "the last week of the month")
WHEN_WORDS = _set("yesterday today tonight tomorrow")
TIME_OPENERS = _set("last next every this")  # "Since this morning some users ...", "every time I start R"
TIME_UNITS = _set(
    "year month week day night weekend morning evening spring summer autumn fall winter hour minute time "
    "monday tuesday wednesday thursday friday saturday sunday"
)
# "in front of each path", "on top of the branch": a preposition of three words, its noun names nothing
PREPOSITION_NOUNS = _set("front top terms means spite behalf case")

# a ratio or an option's value is one word ("4:3", "scale=640:480": "Why doesn't scaling fix my old 4?"), and
# a call is one word with its short argument ("lower(name)", "git-gc(1)"): its parts read apart, the last one
# was taken for the clause's verb (a one-letter placeholder is no part of the name: "os.path.join(a)")
# ... and so is a figure with its thousands ("500,000 rows" was "500", ",", "000 rows")
_TOKEN = re.compile(
    r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\w,])|\[[^\]\s]{1,20}\]|(?<![\w-])--?[A-Za-z][\w-]*|\.?\w[\w.\-+#/'’]*(?:[:=]\w[\w.\-+#/'’]*)*"
    r"(?:\((?:\d{1,3}|\w{2,20})?\))?|[,;:?!]|(?<!=)=(?!=)"
)


_NUMBERED = re.compile(r"\[\d+\]")


def tokens(text: str) -> list[str]:
    """The words of a text, its names whole ("git-gc(1)", "--short", ".gitignore", "[a-z]") and its
    punctuation that ends a phrase or a clause as words of their own."""
    found = [
        t for t in _TOKEN.findall(text) if not _NUMBERED.fullmatch(t)
    ]  # "[1] + suspended": a job's number
    return [t.rstrip(".'’") if not t.startswith(".") or len(t) > 1 else t for t in found]


def figure(word: str) -> bool:
    """A number as a question writes it, with its thousands or not ("40", "500,000")."""
    return word.replace(",", "").isdigit()


def named_am(word: str, previous: str, following: str) -> bool:
    """ "am" is the verb only next to "I" ("I am", "Am I", "how am I"): elsewhere it is a name ("git am
    stops"). extractive/reading/text.py's stopwords say the same for the tokens."""
    return word.lower() == "am" and "i" not in (previous.lower(), following.lower())


def lowered(words: list[str]) -> list[str]:
    """The words in lower case, "am" that is a name marked so no word list takes it for the verb."""
    return [
        "am:name"
        if named_am(w, words[i - 1] if i else "", words[i + 1] if i + 1 < len(words) else "")
        else w.lower()
        for i, w in enumerate(words)
    ]


_ADVERB_LY = re.compile(r"^[a-z]{3,}ly$")


def manner_adverb(word: str) -> bool:
    """A manner adverb in -ly ("cleanly", "accidentally"; lower case), not a noun or a verb that ends so
    ("assembly", "apply")."""
    return _ADVERB_LY.match(word) is not None and word not in NOUNS_LY | VERBS_LY


INDEFINITES = frozenset(
    (
        "everything", "anything", "something", "nothing", "everyone", "anyone", "someone", "nobody",
        "anybody", "somebody", "everybody", "everywhere", "anywhere", "somewhere", "nowhere", "or", "what",
        "who", "where", "how",
    )
)  # fmt: skip
"""Words after which "else" is no thing: "everything else", "or else", "what else"."""
GREETINGS = frozenset(("hi", "hello", "hey", "thanks", "greetings", "cheers"))  # a question's first words
THINGS = frozenset(("anything", "something", "nothing", "everything"))
"""Words after which a word in lower case says what the thing is like: "anything special" (no topic)."""


def passing_times(words: list[str]) -> set[int]:
    """Where the clause says when in passing: "We sold the boat last year", "I deleted a branch yesterday" -
    no word of a noun phrase. Not "the last commit", "in the last month" (a determiner before the opener),
    "the next day delivery option" (a word of the phrase after the unit), nor "the Today show" (a name)."""
    lower = lowered(words)
    found = {i for i, word in enumerate(words) if word in WHEN_WORDS}
    for i in range(len(words) - 1):
        before = lower[i - 1] if i else ""
        end = i + 1  # "every Monday morning": the units after the opener
        while end < len(words) and lower[end] in TIME_UNITS:
            end += 1
        after = lower[end] if end < len(words) else ""
        passing = lower[i] in TIME_OPENERS and end > i + 1
        if (
            passing
            and before not in DETERMINERS | POSSESSIVES
            and (not after or after in FUNCTION_WORDS | CLOSES)
        ):
            found |= set(range(i, end))
    return found | _durations(lower)


_SPAN = frozenset(("a", "few", "couple", "of", "several", "some", "many")) | NUMBERS


def _durations(lower: list[str]) -> set[int]:
    """ "The relay was down for a few hours", "several times a day": how long or how often, in passing."""
    found: set[int] = set()
    for i in (i for i, word in enumerate(lower) if word == "for"):
        end = i + 1
        while end < len(lower) and (lower[end] in _SPAN or figure(lower[end])):
            end += 1
        if end < len(lower) and lower[end].removesuffix("s") in TIME_UNITS:
            found |= set(range(i + 1, end + 1))
    # ... when: "after a night without traffic", "during the weekend", "over time"
    for i in (
        i for i, word in enumerate(lower) if word in ("after", "during", "before", "over", "since", "until")
    ):
        end = i + 1 + int(i + 2 < len(lower) and lower[i + 1] in ("a", "an", "the", "one", "each"))
        ends = end + 1 >= len(lower) or lower[end + 1] in FUNCTION_WORDS | CLOSES  # not "the night shift"
        if end < len(lower) and lower[end].removesuffix("s") in TIME_UNITS and ends:
            found |= set(range(i + 1, end + 1))
    # ... and how often: "several times a day", "twice a week", "the same reminder three or four times"
    for i in (i for i, word in enumerate(lower) if word in ("times", "twice", "once")):
        start, end = i, i + 2
        while start > 0 and (
            lower[start - 1] in _SPAN or figure(lower[start - 1]) or _between(lower, start - 1)
        ):
            start -= 1
        if (
            end < len(lower)
            and lower[i + 1] in ("a", "an", "per", "every", "each")
            and lower[end] in TIME_UNITS
        ):
            found |= set(range(start, end + 1))
        elif (
            start < i
            and lower[i] == "times"
            and (i + 1 == len(lower) or lower[i + 1] in FUNCTION_WORDS | CLOSES)
        ):
            found |= set(range(start, i + 1))
    return found


def _between(lower: list[str], i: int) -> bool:
    """ "or" and "to" between two counts: "three or four times", "2 to 3 times"."""
    counted = (
        i > 0 and i + 1 < len(lower) and all(w in NUMBERS or figure(w) for w in lower[i - 1 : i + 2 : 2])
    )
    return lower[i] in ("or", "to") and counted
