"""Text tools for the extractive engine and for citation checking: keywords, passages, BM25, sentences.

Nothing here generates prose. Extractive mode only selects and quotes text that the run actually fetched.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

_STOPWORD_TEXT = """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has
have having he her here hers him his how i if in into is it its itself just me more most my no nor
not now of off on once only or other our ours out over own same she should so some such than that
the their theirs them then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours yourself vs versus via
per using use used between within without across among whether does do did tell explain describe
compare best good better new
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_TOKEN = re.compile(r"[a-z0-9][a-z0-9\-\+\.#]*[a-z0-9+#]|[a-z0-9]")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[])")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def content_tokens(text: str) -> list[str]:
    return [_stem(tok) for tok in tokenize(text) if tok not in STOPWORDS and len(tok) > 1]


def _stem(token: str) -> str:
    """A tiny suffix stripper: enough for overlap scoring, deterministic and dependency-free."""
    for suffix in ("ations", "ation", "ings", "ing", "ies", "es", "ed", "ly", "s"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            return token[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return token


def keywords(text: str, limit: int = 8) -> list[str]:
    """Distinct content words of a text, in order of first appearance (original spelling)."""
    seen: dict[str, str] = {}
    for tok in tokenize(text):
        if tok in STOPWORDS or len(tok) < 3:
            continue
        seen.setdefault(_stem(tok), tok)
    return list(seen.values())[:limit]


_CONTINUES = re.compile(r"^(?![-*+] )[a-z`(,;–—]")


def _logical_lines(text: str) -> list[str]:
    """Lines, with hard-wrapped prose re-joined: a line that does not end a sentence continues when the
    next one starts in lower case (Markdown and plain-text files wrap paragraphs at ~80 columns)."""
    lines: list[str] = []
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if not line:
            lines.append("")
            continue
        previous = lines[-1] if lines else ""
        if (
            previous
            and previous[-1] not in ".!?:"
            and not previous.startswith("#")
            and _CONTINUES.match(line)
        ):
            lines[-1] = f"{lines[-1]} {line}"
        else:
            lines.append(line)
    return [line for line in lines if line]


def split_sentences(text: str) -> list[str]:
    """Sentences of a text. A line break ends a sentence too (unless the line is wrapped prose):
    extracted pages put headings, list items and paragraphs on their own lines, and a heading must not
    glue itself to the next sentence."""
    sentences: list[str] = []
    for line in _logical_lines(text):
        sentences.extend(part.strip() for part in _SENTENCE_END.split(line) if part.strip())
    return sentences


def chunk_passages(text: str, target_chars: int = 800, max_chars: int = 1400) -> list[str]:
    """Split text into passages on line/paragraph boundaries, ~target_chars each. Line breaks are kept,
    and a blank line between paragraphs stays blank, so sentence splitting still sees the boundaries."""
    paragraphs = [block.strip() for block in re.split(r"\n\s*\n", text) if block.strip()]
    paragraphs = [
        "\n".join(" ".join(line.split()) for line in p.splitlines() if line.strip()) for p in paragraphs
    ]
    passages: list[str] = []
    current = ""
    for paragraph in paragraphs:
        if len(paragraph) > max_chars:
            if current:
                passages.append(current)
                current = ""
            sentences = split_sentences(paragraph)
            piece = ""
            for sentence in sentences:
                if piece and len(piece) + len(sentence) + 1 > target_chars:
                    passages.append(piece)
                    piece = ""
                piece = f"{piece}\n{sentence}" if piece else sentence  # one sentence per line
            if piece:
                passages.append(piece[:max_chars])
            continue
        if current and len(current) + len(paragraph) + 1 > target_chars:
            passages.append(current)
            current = ""
        current = f"{current}\n\n{paragraph}" if current else paragraph
    if current:
        passages.append(current)
    return passages


class BM25:
    """Okapi BM25 over a fixed list of documents (k1=1.5, b=0.75)."""

    def __init__(self, docs: list[list[str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.docs, self.k1, self.b = docs, k1, b
        self._tf = [Counter(doc) for doc in self.docs]
        self._avgdl = (sum(len(d) for d in self.docs) / len(self.docs)) if self.docs else 0.0
        df: Counter[str] = Counter()
        for doc in self.docs:
            df.update(set(doc))
        n = len(self.docs)
        self._idf = {term: math.log(1 + (n - freq + 0.5) / (freq + 0.5)) for term, freq in df.items()}

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> BM25:
        return cls([content_tokens(text) for text in texts])

    def scores(self, query: str | Sequence[str]) -> list[float]:
        terms = content_tokens(query) if isinstance(query, str) else list(query)
        result = []
        for doc, tf in zip(self.docs, self._tf, strict=True):
            length_norm = self.k1 * (1 - self.b + self.b * len(doc) / (self._avgdl or 1))
            score = 0.0
            for term in set(terms):
                freq = tf.get(term, 0)
                if freq:
                    score += self._idf.get(term, 0.0) * freq * (self.k1 + 1) / (freq + length_norm)
            result.append(score)
        return result


def overlap(claim: str, passage: str) -> float:
    """Share of the claim's content words found in the passage (0..1). Citation support check."""
    claim_terms = set(content_tokens(claim))
    if not claim_terms:
        return 0.0
    return len(claim_terms & set(content_tokens(passage))) / len(claim_terms)


_QUESTION_SPLIT = re.compile(r"\?\s+|;\s+|\s+(?:and also|as well as|and then)\s+", re.IGNORECASE)
_ASPECTS = (
    ("What is {topic} and how does it work?", "{kw} overview how it works"),
    ("What evidence and measurements exist about {topic}?", "{kw} evidence data study"),
    ("What are the limitations, risks and trade-offs of {topic}?", "{kw} limitations risks trade-offs"),
)


def decompose_question(question: str, max_queries: int) -> tuple[list[str], list[str]]:
    """Keyword-based decomposition: (sub_questions, queries). Used when no LLM is configured."""
    question = " ".join(question.split())
    parts = [p.strip(" ?.") for p in _QUESTION_SPLIT.split(question) if len(p.strip(" ?.")) > 8]
    sub_questions = [p if p.endswith("?") else f"{p}?" for p in parts] if len(parts) > 1 else []
    kws = keywords(question)
    topic = " ".join(kws[:4]) or question
    if not sub_questions:
        sub_questions = [question.rstrip("?") + "?"]
        sub_questions += [tmpl.format(topic=topic) for tmpl, _ in _ASPECTS[1:]]
    queries = [question]
    queries += [" ".join(keywords(sq, 6)) for sq in sub_questions if keywords(sq, 6)]
    queries += [q.format(kw=topic) for _, q in _ASPECTS]
    unique = list(dict.fromkeys(q for q in queries if q.strip()))
    return sub_questions[:6], unique[:max_queries]


RISK_CUES = (
    "risk",
    "however",
    "but ",
    "limitation",
    "drawback",
    "concern",
    "fail",
    "cannot",
    "danger",
    "trade-off",
    "tradeoff",
    "downside",
    "caveat",
    "unless",
    "problem",
    "cost",
)
IMPLICATION_CUES = (
    "therefore",
    "means",
    "so that",
    "as a result",
    "leads to",
    "implies",
    "which allows",
    "enables",
    "consequently",
    "thus",
    "because",
    "result in",
    "allows",
)


def has_cue(sentence: str, cues: Sequence[str]) -> bool:
    lowered = f" {sentence.lower()} "
    return any(cue in lowered for cue in cues)


def is_statement(sentence: str, min_words: int = 6) -> bool:
    """A full sentence (not a heading, caption, code line or fragment) of reasonable length."""
    return bool(
        len(sentence.split()) >= min_words and len(sentence) <= 600 and _FULL_SENTENCE.match(sentence.strip())
    )


_FULL_SENTENCE = re.compile(r"^[\"'“(]?[A-Z0-9].*[.!?][\"')”]?$", re.DOTALL)


def statements(passage: str) -> list[str]:
    return [s for s in split_sentences(passage) if is_statement(s)]


def best_sentences(passage: str, query: str, limit: int = 2) -> list[str]:
    """The passage's full sentences that best match the query, in their original order."""
    sentences = statements(passage)
    if not sentences:
        return []
    scored = sorted(((overlap(query, s), i) for i, s in enumerate(sentences)), reverse=True)[:limit]
    return [sentences[i] for score, i in sorted(scored, key=lambda x: x[1]) if score > 0]
