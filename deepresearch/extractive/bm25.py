"""BM25F over documents with fields (a page's or a section's title, heading path and body), for ranking the
fetched pages and their passages against a question."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from deepresearch.extractive.text import content_tokens

__all__ = ["BM25F", "FIELD_WEIGHTS", "GENERIC_SHARE", "term_weights"]

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
