"""Sub-questions that read as real questions about what was asked (session 29): a name's possessive opens the
subject ("mod_filter's smart filtering"), a participle of the subject's own is not its verb ("a partial
clone made with --filter"), alternatives named in passing are not asked about one by one ("as a tar or zip
file"), "What is X?" keeps an article where the question's determiner cannot go with X, and a verb
coordinated with a how-to question's task takes -ing with it (session 30: "... and mailing them"). The rarity
figures are the ones the Debian manuals give (document shares of each phrase, bench/quality's corpora)."""

from __future__ import annotations

import pytest

from bench.quality.grammar import grammar_problems
from deepresearch.extractive.asking.comparison import article, compared_members, named_alone
from deepresearch.extractive.asking.phrases import noun_phrases
from deepresearch.extractive.asking.planning import keyword_plan
from deepresearch.extractive.inflection import gerund

FILTER = (
    "How does mod_filter's smart filtering decide which filter provider runs on a response, and what are the "
    "steps to configure a filter chain with it?"
)
PARTIAL = (
    "How does a partial clone made with --filter work, and how does Git get the objects the server left out?"
)
PARTIAL_RARITY = {
    "partial clone": 0.075, "clone": 0.275, "partial": 0.133, "--filter": 0.247, "git": 0.984,
    "objects": 0.569, "server": 0.231, "made": 0.369, "work": 0.651, "get": 0.416, "left": 0.227,
}  # fmt: skip
ARCHIVE = (
    "How do I export the files of a tagged release as a tar or zip file without the .git directory, and can "
    "I leave some files out of it?"
)
ARCHIVE_RARITY = {
    "files": 0.82, "tagged release": 0.008, "release": 0.129, "tagged": 0.388, "tar or zip file": 0.0,
    "or zip file": 0.0, "zip file": 0.012, "file": 0.82, "tar": 0.047, "or": 0.851, "zip": 0.031,
    ".git directory": 0.102, "directory": 0.553, ".git": 0.984, "export": 0.114, "leave": 0.212,
}  # fmt: skip
VHOST = "How does Apache httpd decide which name-based virtual host answers a request?"
VHOST_RARITY = {
    "apache httpd": 0.258, "httpd": 0.836, "apache": 1.0, "name-based virtual host": 0.061,
    "virtual host": 0.463, "host": 0.574, "name-based": 0.07, "virtual": 0.492, "request": 0.689,
    "decide": 0.09, "answers": 0.066,
}  # fmt: skip


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        (
            "How does mod_filter's smart filtering decide which filter provider runs on a response",
            [
                ("mod_filter's smart filtering", "subject"),
                ("filter provider runs", "clause"),
                ("a response", "pp"),
            ],
        ),
        ("Why does Git's rebase drop my commit", [("Git's rebase", "subject"), ("my commit", "object")]),
        # a name alone is still a whole subject, its verb right after it
        ("How does asyncio.gather handle errors", [("asyncio.gather", "subject"), ("errors", "object")]),
    ],
)
def test_a_names_possessive_opens_the_subject(clause: str, expected: list[tuple[str, str]]) -> None:
    assert [(p.text, p.role) for p in noun_phrases(clause)] == expected


def test_the_possessive_subject_is_the_topic_and_no_word_of_it_is_conjugated() -> None:
    plan = keyword_plan(FILTER, 5)
    assert plan.topic == "mod_filter's smart filtering"
    assert (
        "What are the steps to configure a filter chain with mod_filter's smart filtering?"
        in plan.sub_questions
    )
    assert (
        "What are the limitations of how mod_filter's smart filtering decides which filter provider runs on "
        "a response?"
    ) in plan.sub_questions
    session = keyword_plan(
        "How do mod_session's options for keeping a session on the server differ from keeping it in a file?",
        5,
    )
    assert not any("optionses" in sq for sq in session.sub_questions)


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        (
            "How does a partial clone made with --filter work",
            [("a partial clone", "subject"), ("--filter", "pp")],
        ),
        # no participle: the verb stays where it is expected, and the infinitive at the end is no verb of it
        (
            "How does git gc decide which objects to prune",
            [("git gc", "subject"), ("objects", "clause"), ("prune", "pp")],
        ),
        # a participle of the object's, and a question that ends on a noun: the verb is where it was
        (
            "How does SQLite handle rows inserted in WAL mode",
            [("SQLite", "subject"), ("rows", "object"), ("WAL mode", "pp")],
        ),
    ],
)
def test_a_participle_of_the_subject_is_not_its_verb(clause: str, expected: list[tuple[str, str]]) -> None:
    assert [(p.text, p.role) for p in noun_phrases(clause)] == expected


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        # the subject runs on through "of a process": "limits" is no verb, nor is "a process differ" a noun
        (
            "How do the soft and hard limits of a process differ?",
            ["What is the soft limit?", "What is the hard limit?"],
        ),
        (
            "How do the tide and wind tables of a harbour compare?",
            ["What is the tide table?", "What is the wind table?"],
        ),
    ],
)
def test_a_verb_that_needs_no_object_ends_a_subject_that_runs_through_a_preposition(
    question: str, asked: list[str]
) -> None:
    plan = keyword_plan(question, 5)
    assert plan.sub_questions[1:3] == asked, plan.sub_questions


def test_the_subject_with_its_participle_is_asked_about_whole() -> None:
    plan = keyword_plan(PARTIAL, 5, rarity=PARTIAL_RARITY)
    assert plan.topic == "a partial clone"
    assert plan.sub_questions[2:] == [
        "What is a partial clone?",
        "What are the limitations of a partial clone?",
    ]


def test_a_participle_after_the_subject_is_not_conjugated() -> None:
    handled = keyword_plan("How does git handle files added with git add?", 5)
    assert "What are the limitations of how git handles files added with git add?" in handled.sub_questions
    created = keyword_plan("How does a commit created by cherry-pick work?", 5)
    assert not any("createds" in sq for sq in created.sub_questions)
    # a regular participle, as "made" is an irregular one
    cloned = keyword_plan(PARTIAL.replace(" made ", " created "), 5, rarity=PARTIAL_RARITY)
    assert cloned.sub_questions[-1] == "What are the limitations of a partial clone?"


def test_alternatives_named_in_passing_are_not_asked_about_one_by_one() -> None:
    plan = keyword_plan(ARCHIVE, 5, rarity=ARCHIVE_RARITY)
    assert plan.topic == "a tar or zip file"
    assert not any(sq.startswith("What is") for sq in plan.sub_questions)
    assert "tar file" not in plan.queries and "zip file" not in plan.queries
    (phrase,) = [p for p in noun_phrases("How do I export it as a tar or zip file") if p.items]
    assert compared_members("How do I export it as a tar or zip file?", phrase) == []
    # ... but a question that offers the choice asks about each
    (choice,) = [p for p in noun_phrases("Should I export it as a tar or zip file") if p.items]
    assert compared_members("Should I export it as a tar or zip file?", choice) == [
        "a tar file",
        "a zip file",
    ]
    compared = keyword_plan("How do the prefork, worker and event multi-processing modules differ?", 5)
    assert "What is the worker multi-processing module?" in compared.sub_questions
    # a how question that asks to choose still compares what it names
    for choosing in (
        "How do I decide between a list or a tuple?",
        "How should I store dates, as TEXT or INTEGER?",
    ):
        assert len([sq for sq in keyword_plan(choosing, 5).sub_questions if sq.startswith("What is")]) == 2


def test_what_is_keeps_an_article_the_question_could_not_give() -> None:
    plan = keyword_plan(VHOST, 5, rarity=VHOST_RARITY)
    assert "What is a name-based virtual host?" in plan.sub_questions
    clause = "Can Git remember my long-lived branch"
    (mine,) = [p for p in noun_phrases(clause) if p.text == "my long-lived branch"]
    assert named_alone(mine, "long-lived branch", clause) == "a long-lived branch"
    # a name or a phrase with its own article stays as it is
    (name,) = [p for p in noun_phrases("Why does git rm refuse") if p.text == "git rm"]
    assert named_alone(name, "git rm", "Why does git rm refuse") == "git rm"
    (own,) = [p for p in noun_phrases("How does the event MPM work") if p.role == "subject"]
    assert named_alone(own, "the event MPM", "How does the event MPM work") == "the event MPM"


def test_a_coordinator_after_a_partial_subject_is_not_conjugated() -> None:
    plan = keyword_plan(
        "How do SAVEPOINT, RELEASE and ROLLBACK TO differ from BEGIN, COMMIT and ROLLBACK?", 5
    )
    limits = [sq for sq in plan.sub_questions if sq.startswith("What are the limitations of how")]
    assert limits == [
        "What are the limitations of how SAVEPOINT, RELEASE and ROLLBACK TO differ from BEGIN, COMMIT and "
        "ROLLBACK?"
    ]


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("user-defined function", "a"),
        ("unique index", "a"),
        ("one-time token", "a"),
        ("HTTP proxy", "an"),
        ("SQLite table", "an"),
        ("SSH key", "an"),
        ("JSON value", "a"),
        ("URL", "a"),
        ("index", "an"),
        ("hour", "an"),
        ("long-lived branch", "a"),
        ("ffmpeg job", "an"),
        ("nginx site", "an"),
        ("xml file", "an"),
        ("rsync mirror", "an"),
        ("gzip stream", "a"),
        ("dpkg database", "a"),
        ("string", "a"),
        ("shell hook", "a"),
    ],
)
def test_the_article_goes_by_the_sound_the_words_open_with(words: str, expected: str) -> None:
    assert article(words) == expected


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        (
            "turn the commits of my branch into patch files and mail them to a mailing list",
            "turning the commits of my branch into patch files and mailing them to a mailing list",
        ),
        (
            "stage only some of the changes I made to a file and leave the rest for a later commit",
            "staging only some of the changes I made to a file and leaving the rest for a later commit",
        ),
        (
            "stop Git from tracking a file but keep the file itself",
            "stopping Git from tracking a file but keeping the file itself",
        ),
        (
            "insert a row in SQLite, or update the existing one",
            "inserting a row in SQLite, or updating the existing one",
        ),
        # a past form in a relative clause is no second task; nor is a noun after "and"
        (
            "find the commit that added or removed a particular function call",
            "finding the commit that added or removed a particular function call",
        ),
        ("copy the branch and tag names to a file", "copying the branch and tag names to a file"),
        ("find the commit that adds or removes a call", "finding the commit that adds or removes a call"),
        ("move the files and all the folders to a disk", "moving the files and all the folders to a disk"),
        # only after a coordinator: "field" is followed by its object's article, and no verb
        (
            "give a dataclass field a mutable default value",
            "giving a dataclass field a mutable default value",
        ),
        # after a causative the second verb is the agent's: "make git blame (look ... and attribute ...)"
        (
            "make git blame look past commits that moved code and attribute the lines to others",
            "making git blame look past commits that moved code and attribute the lines to others",
        ),
    ],
)
def test_a_verb_coordinated_with_the_task_takes_ing_as_well(task: str, expected: str) -> None:
    plan = keyword_plan(f"How do I {task}?", 5)
    assert f"What are the limitations of {expected}?" in plan.sub_questions


def test_a_coordinated_task_in_ing_passes_the_benchs_grammar_check() -> None:
    question = (
        "How do I turn the commits of my branch into patch files and mail them to a project's mailing list "
        "for review?"
    )
    limits = [sq for sq in keyword_plan(question, 5).sub_questions if "limitations" in sq]
    assert limits and "and mailing them" in limits[0]
    assert grammar_problems(limits[0], question) == []


@pytest.mark.parametrize(
    "task",
    [
        # a noun with a clause, a comparison or a manner after it
        "find the date and time a file was last modified",
        "set the owner and group the same as another file",
        "rename a table or column the safe way",
        # a verb after a relative, a subordinator or an infinitive's "to" is that clause's
        "find the commits that add or remove a function call",
        "see which user and group it runs as",
        "use rsync to copy files and preserve their permissions",
        "get Apache to rewrite URLs and keep the query string",
    ],
)
def test_a_word_after_a_coordinator_that_is_no_second_task_keeps_its_form(task: str) -> None:
    plan = keyword_plan(f"How do I {task}?", 5)
    first, rest = task.split(" ", 1)
    expected = f"{gerund(first)} {rest}"
    assert f"What are the limitations of {expected}?" in plan.sub_questions, plan.sub_questions


def test_a_verb_whose_stress_falls_last_doubles_its_consonant() -> None:
    plan = keyword_plan("How do I format a disk and mount it?", 5)
    assert "What are the limitations of formatting a disk and mounting it?" in plan.sub_questions


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        # CMake: "What is PRIVATE?" was answered from the PRIVATE_HEADER property's page
        (
            "What is the difference between PRIVATE, PUBLIC and INTERFACE in target_link_libraries?",
            ["What is PRIVATE in target_link_libraries?", "What is PUBLIC in target_link_libraries?"],
        ),
        ("What is the difference between a merge and a rebase in git?", ["What is a merge in git?"]),
        # ... not a purpose nor an idiom: "What is TEXT for dates in SQLite?" would ask nothing
        ("Should I use TEXT or INTEGER for dates in SQLite?", ["What is TEXT?", "What is INTEGER?"]),
        (
            "What is the difference between git reset --soft and --hard in practice?",
            ["What is git reset --soft?"],
        ),
    ],
)
def test_what_the_compared_things_are_compared_within_is_asked_of_each(
    question: str, asked: list[str]
) -> None:
    sub_questions = keyword_plan(question, 5).sub_questions
    assert all(q in sub_questions for q in asked), sub_questions
