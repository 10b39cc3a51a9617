"""A scripted "model" for workflow tests: answers each engine prompt (by its prompt id) from the request.

It is deliberately simple and deterministic: it plans queries from the question's words, keeps every
screened passage, quotes the first sentence of each evidence passage as a finding, and writes a report that
cites those passages - plus one citation to a source that does not exist and one unsupported claim, so
the engine's citation check has something to remove.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from peers.openai_server import last_user_message, prompt_id

_EVIDENCE_ITEM = re.compile(r"^\[(\d+)\][^\n]*\n(.+?)(?=\n\n\[\d+\]|\Z)", re.MULTILINE | re.DOTALL)
_PASSAGE = re.compile(r"^\[(S\d+\.\d+)\]", re.MULTILINE)
UNSUPPORTED_CLAIM = "Quantum entanglement doubles the throughput of every relational database"


def _prose(kind: str) -> str:
    return {
        "plan": 'Question: what is it?\nQuery 1: "the topic"\nQuery 2: "the topic evidence"',
        "report": "The topic is important and has many aspects worth considering.",
    }.get(kind, "Here is my answer: the evidence looks relevant and sufficient overall.")


def _empty(kind: str) -> str:
    return {
        "plan": '{"sub_questions": [], "queries": [""], "rationale": ""}',
        "screen": '{"relevant": []}',
        "reflect": '{"sufficient": false, "knowledge_gaps": [], "follow_up_queries": []}',
        "review": '{"findings": [], "disagreements": [], "open_questions": []}',
        "critic": '{"issues": [], "unsupported_claims": [], "missing_perspectives": [], "suggestions": []}',
        "report": "## Summary\n\nNothing to say.",
    }.get(kind, "{}")


def _out_of_range(kind: str) -> str:
    return {
        "plan": '{"sub_questions": ["string", "string"], "queries": ["query", "..."], "rationale": "x"}',
        "screen": '{"relevant": [{"passage_id": "S99.1", "relevance": 0.9, "reason": "made up"}]}',
        "reflect": '{"sufficient": false, "knowledge_gaps": ["more"], "follow_up_queries": []}',
        "review": json.dumps(
            {"findings": [{"statement": "A claim.", "citations": [97, 98], "confidence": "high"}]}
        ),
        "critic": '{"issues": [""], "unsupported_claims": [], "missing_perspectives": [], "suggestions": []}',
        "report": "## Summary\n\nA claim [97].\n\n## Findings\n\nAnother [98].\n\n"
        "## Disagreements and risks\n\n## Open questions\n\n## Recommendations\n",
    }.get(kind, "{}")


# what SmolLM2-135M wrote under a grammar: the right shape, no meaning
SMALL_MODEL_PLAN = json.dumps(
    {"sub_questions": [",", "query1", "query2"], "queries": ["no code here."], "rationale": "string"}
)


def _placeholder(kind: str) -> str:
    return {
        "plan": SMALL_MODEL_PLAN,
        "screen": '{"relevant": []}',
        "reflect": json.dumps(
            {"sufficient": False, "knowledge_gaps": ["string"], "follow_up_queries": ["query1", ","]}
        ),
        "review": json.dumps(
            {
                "findings": [
                    {"statement": "statement", "citations": [1]},
                    {"statement": "...", "citations": [1]},
                ],
                "disagreements": ["string"],
                "open_questions": ["..."],
            }
        ),
        "critic": json.dumps(
            {
                "issues": ["issues"],
                "unsupported_claims": ["..."],
                "missing_perspectives": [","],
                "suggestions": ["example"],
            }
        ),
        "report": "## Summary\n\n...\n\n## Findings\n\n### query1\n\n[1]\n\n## Disagreements and risks\n\n"
        "## Open questions\n\n## Recommendations\n",
    }.get(kind, "{}")


_MESSY = {"prose": _prose, "empty": _empty, "out_of_range": _out_of_range, "placeholder": _placeholder}


def _first_sentence(text: str) -> str:
    sentence = re.split(r"(?<=[.!?])\s+", " ".join(text.split()), maxsplit=1)[0]
    return sentence.rstrip(".!?")


@dataclass
class ResearchResponder:
    queries: list[str] | None = None
    reflection_sufficient: bool = True
    follow_up_prefix: str = "follow-up"
    plan_wrapper: str = "{json}"
    """How the plan JSON is wrapped, e.g. '<think>hmm</think>```json\\n{json}\\n```' for messy output."""
    hopeless_plan: bool = False
    plan_answer: str | None = None
    """When set, the plan prompt (and its re-ask) is answered with exactly this."""
    messy: str | None = None
    """Every prompt answered badly, as small models do: ``prose`` (a plausible answer, but no JSON),
    ``empty`` (valid JSON, empty arrays; a report without its sections), ``out_of_range`` (passage ids
    never shown, citations of sources not listed), ``placeholder`` (the right shape, filled with
    placeholders, punctuation and schema words)."""
    seen: list[str] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> str:
        pid = prompt_id(body) or "unknown"
        self.seen.append(pid)
        user = last_user_message(body)
        if self.messy is not None:
            return _MESSY[self.messy](pid.split("/")[0])
        handler = getattr(self, "_" + pid.split("/")[0], None)
        if handler is None:
            return "I do not know this prompt."
        return handler(user)

    def _plan(self, user: str) -> str:
        if self.plan_answer is not None:
            return self.plan_answer
        if self.hopeless_plan:
            return "Sorry, I would rather write a poem about research than a plan."
        question = re.search(r"Question: (.+)", user)
        count = re.search(r"exactly (\d+) search queries", user)
        n = int(count.group(1)) if count else 3
        topic = question.group(1).strip().rstrip("?") if question else "the topic"
        queries = self.queries or [
            topic,
            f"{topic} evidence",
            f"{topic} risks",
            f"{topic} history",
            f"{topic} costs",
            f"{topic} alternatives",
        ]
        plan = {
            "sub_questions": [f"What is {topic}?", f"What are the risks of {topic}?"],
            "queries": queries[:n],
            "rationale": "scripted plan",
        }
        if "re-ask" in user.lower() or "validation" in user.lower():
            return json.dumps(plan)
        return self.plan_wrapper.replace("{json}", json.dumps(plan))

    def _screen(self, user: str) -> str:
        ids = _PASSAGE.findall(user)
        return json.dumps(
            {"relevant": [{"passage_id": pid, "relevance": 0.8, "reason": "on topic"} for pid in ids]}
        )

    def _reflect(self, user: str) -> str:
        done = re.findall(r"^- (.+)$", user.split("Queries already run:")[-1], re.MULTILINE)
        question = re.search(r"Question: (.+)", user)
        # on topic, as the engine checks: the question's first words
        topic = " ".join((question.group(1) if question else "the topic").rstrip("?").split()[:6])
        return json.dumps(
            {
                "sufficient": self.reflection_sufficient,
                "knowledge_gaps": [] if self.reflection_sufficient else [f"more numbers needed on {topic}"],
                "follow_up_queries": []
                if self.reflection_sufficient
                else [f"{self.follow_up_prefix} {len(done) + i} {topic}" for i in range(2)],
            }
        )

    def _review(self, user: str) -> str:
        findings = [
            {
                "sub_question": "",
                "statement": _first_sentence(passage) + ".",
                "citations": [int(n)],
                "confidence": "medium",
            }
            for n, passage in _EVIDENCE_ITEM.findall(user)[:4]
        ]
        return json.dumps({"findings": findings, "disagreements": [], "open_questions": ["what next?"]})

    def _critic(self, user: str) -> str:
        return json.dumps(
            {
                "issues": ["Some findings rest on one source."],
                "unsupported_claims": [],
                "missing_perspectives": ["cost data"],
                "suggestions": ["Cite numbers."],
            }
        )

    def _report(self, user: str) -> str:
        items = _EVIDENCE_ITEM.findall(user)
        lines = ["## Summary", ""]
        for n, passage in items[:3]:
            lines.append(f"- {_first_sentence(passage)} [{n}].")
        lines += ["", "## Findings", "", "### Details", ""]
        for n, passage in items[3:6]:
            lines.append(f"{_first_sentence(passage)} [{n}].")
        lines += [
            "",
            "## Disagreements and risks",
            "",
            f"- {UNSUPPORTED_CLAIM} [1].",
            "- A claim about a source that was never fetched [99].",
            "",
            "## Open questions",
            "",
            "- More measurements are needed.",
            "",
            "## Recommendations",
            "",
            "- Read https://evil.example/phish for more.",
        ]
        return "\n".join(lines)
