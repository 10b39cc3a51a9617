"""BM25F over documents with fields (a page's or a section's title, heading path and body), for ranking the
fetched pages and their passages against a question; and the score of a quote for a sub-question (Scorer)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from deepresearch.extractive.asking.clauses import asker_condition
from deepresearch.extractive.asking.phrases import verb_terms
from deepresearch.extractive.reading.sentences import Quote
from deepresearch.extractive.reading.text import content_tokens

__all__ = ["BM25F", "FIELD_WEIGHTS", "GENERIC_SHARE", "QueryWeights", "Scorer", "term_weights"]

FIELD_WEIGHTS: Mapping[str, float] = {"title": 2.0, "headings": 3.0, "body": 1.0}
"""BM25F weights: a term in the section's heading path counts three times a term in its body, so the section
titled like the question wins; the page title helps every section of the right page."""


class BM25F:
    """BM25F (Robertson and Zaragoza) over documents with fields: each field's term frequency is normalised
    by the field's length, weighted, summed, then saturated once (k1 = 1.2, b = 0.75)."""

    def __init__(
        self,
        docs: Sequence[Mapping[str, list[str]]],
        weights: Mapping[str, float] = FIELD_WEIGHTS,
        k1: float = 1.2,
        b: float = 0.75,
    ) -> None:
        self.weights, self.k1, self.b = dict(weights), k1, b
        self._tf = [{f: Counter(doc.get(f, [])) for f in self.weights} for doc in docs]
        self._len = [{f: len(doc.get(f, [])) for f in self.weights} for doc in docs]
        n = len(docs)
        self._avg = {f: (sum(d[f] for d in self._len) / n if n else 0.0) or 1.0 for f in self.weights}
        df: Counter[str] = Counter()
        for doc in docs:
            df.update({t for f in self.weights for t in doc.get(f, [])})
        self._idf = {term: math.log(1 + (n - freq + 0.5) / (freq + 0.5)) for term, freq in df.items()}

    def scores(self, query: str | Sequence[str] | Mapping[str, float]) -> list[float]:
        """Each document's score; a mapping weighs its terms (a verb of the question counts less than the
        things it names)."""
        if isinstance(query, Mapping):
            terms = dict(query)
        else:
            terms = dict.fromkeys(content_tokens(query) if isinstance(query, str) else query, 1.0)
        result = []
        for tf, lengths in zip(self._tf, self._len, strict=True):
            score = 0.0
            for term, boost in terms.items():
                weighted = 0.0
                for name, weight in self.weights.items():
                    freq = tf[name].get(term, 0)
                    if freq:
                        norm = 1 - self.b + self.b * lengths[name] / self._avg[name]
                        weighted += weight * freq / norm
                if weighted:
                    score += boost * self._idf.get(term, 0.0) * weighted / (self.k1 + weighted)
            result.append(score)
        return result


GENERIC_SHARE = 0.5
GENERIC_FLOOR = 0.2


def term_weights(rarity: Mapping[str, float] | None) -> dict[str, float]:
    """How much each word of the question counts when matching text, by how many of the corpus's documents
    hold it: 1 up to GENERIC_SHARE of them, less above (to GENERIC_FLOOR for a word on every page: "Apache"
    in Apache's manual names nothing in particular). Keyed by stem (content_tokens). The callers leave the
    topic's own words at 1: "virtual host" is on half of Apache's pages and still what the question asks."""
    weights: dict[str, float] = {}
    for word, share in (rarity or {}).items():
        if " " in word or share <= 0:
            continue
        factor = (
            1.0 if share <= GENERIC_SHARE else max(GENERIC_FLOOR, math.log(share) / math.log(GENERIC_SHARE))
        )
        for stem in content_tokens(word):
            weights[stem] = min(weights.get(stem, 1.0), factor)
    return weights


COVERAGE = 0.45
RANK = 0.5
"""A quote's relevance: how much of the sub-question it names, and how well its section answers it."""
VERB = 0.3
"""What a verb of the sub-question counts: the sources explain "decides" with "selects", "chooses"."""
SIDE = 0.5
"""What a word of what the asker can already do counts (clauses.asker_condition): "when I can edit the main
server configuration" says when "Why avoid .htaccess files?" is asked, not what answers it."""
COMMON = 0.2
"""Share of a sub-question's candidate quotes that must name a topic word for it to count half."""

# release notes describe what changed, not how a thing works
_NEWS = re.compile(r"\b(?:the new|is new|now|has been added|have been added|was added|were added)\b", re.I)


@dataclass(frozen=True, slots=True)
class QueryWeights:
    """Idf weights of a sub-question's own terms and of the question's other terms."""

    own: dict[str, float]
    context: dict[str, float]


class Scorer:
    """Relevance of quotes to a query: the idf-weighted share of the query's terms a quote contains, with the
    question's own terms counting half, plus the rank of the passage it came from."""

    def __init__(self, units: Iterable[Quote]) -> None:
        units = list(units)
        self._n, self._df = max(len(units), 1), Counter(t for unit in units for t in unit.terms)

    def idf(self, term: str) -> float:
        return math.log(1 + (self._n - self._df.get(term, 0) + 0.5) / (self._df.get(term, 0) + 0.5))

    def weights(
        self,
        query: str,
        question: str,
        topic: str = "",
        candidates: Sequence[Quote] = (),
        generic: Mapping[str, float] | None = None,
    ) -> QueryWeights:
        """The topic's own words count half when the candidates are about the topic (one in five or more
        names it): what tells them apart is the rest of the sub-question ("timeout" in "What happens when a
        subprocess.run call exceeds its timeout?"). A topic word few candidates name is what the
        sub-question is after ("prefork" in "What is the prefork module?" when the question compares three).
        Verbs count half too: the sources say "selects" where the question says "decides"."""
        topic_terms = shared = set(content_tokens(topic))
        if candidates:
            shared = {t for t in shared if sum(t in c.terms for c in candidates) >= COMMON * len(candidates)}
        light = verb_terms(query) - topic_terms
        before, condition = asker_condition(query)
        side = set(content_tokens(condition)) - set(content_tokens(before)) - topic_terms
        # a word on every page of the corpus counts little (bm25.term_weights), unless it is the topic's
        scale = {t: w for t, w in (generic or {}).items() if t not in topic_terms}
        own = {
            t: self.idf(t)
            * (VERB if t in light else 0.5 if t in shared else 1.0)
            * scale.get(t, 1.0)
            * (SIDE if t in side else 1.0)
            for t in content_tokens(query)
        }
        context = {
            t: self.idf(t) * (VERB if t in light else 1.0) * scale.get(t, 1.0)
            for t in content_tokens(question)
        }
        # no word outweighs all the others together: a rare word of the question ("enforced") would make
        # every sentence that has it the answer, and every one that explains the answer without it a miss
        for term, weight in own.items():
            others = sum(own.values()) - weight
            if others > 0:
                own[term] = min(weight, others)
        return QueryWeights(own, {t: w for t, w in context.items() if t not in own})

    @staticmethod
    def coverage(unit: Quote, weights: QueryWeights) -> float:
        """Idf-weighted share of the sub-question's terms found in the quote (70 %) and of the rest of the
        question's (30 %). The section's name counts half: it is context; every quote of a section has it."""
        label_terms = set(content_tokens(unit.section))

        def share(terms: dict[str, float]) -> float:
            found = sum(
                w if t in unit.terms else 0.5 * w for t, w in terms.items() if t in unit.terms | label_terms
            )
            return found / (sum(terms.values()) or 1.0)

        own = share(weights.own)
        return 0.7 * own + 0.3 * (share(weights.context) if weights.context else own)

    def score(self, unit: Quote, weights: QueryWeights, passage_rank: float, about: bool = False) -> float:
        """COVERAGE x coverage + RANK x the passage's rank, plus small signals: the section's first statement
        (it often defines the subject), a sentence whose subject is a term asked about ("Handlers send
        ..."), a page whose title names the topic; minus change notes ("The new X has been added")."""
        lead = 0.1 if unit.position == 0 else 0.0
        subject = 0.1 if unit.subject in weights.own else 0.0
        news = 0.1 if _NEWS.search(unit.text) else 0.0
        relevance = COVERAGE * self.coverage(unit, weights) + RANK * passage_rank
        return relevance + lead + subject + 0.1 * about - news


PART_OF_WORD = 0.6
"""What a word counts as a part of a compound ("type" in "datatypes", "autoinc" in "autoincrement")."""


def word_match(word: str, other: str) -> float:
    """1 for the same word (stem), PART_OF_WORD when the shorter one (3 letters or more) begins or ends the
    longer one, at least three letters longer (a compound), else 0."""
    if word == other:
        return 1.0
    short, long = sorted((word, other), key=len)
    if len(short) >= 3 and len(long) >= len(short) + 3 and (long.startswith(short) or long.endswith(short)):
        return PART_OF_WORD
    return 0.0


def named_share(
    terms: Iterable[str], names: Iterable[str], weights: Mapping[str, float] | None = None
) -> float:
    """The (weighted) share of ``terms`` that ``names`` holds, a compound counting PART_OF_WORD."""
    terms, names = list(dict.fromkeys(terms)), set(names)
    total = sum((weights or {}).get(t, 1.0) for t in terms)
    found = sum(
        (weights or {}).get(t, 1.0) * max((word_match(t, n) for n in names), default=0.0) for t in terms
    )
    return found / total if total else 0.0
