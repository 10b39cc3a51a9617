"""LLMClient.structured() against a real HTTP server speaking the OpenAI wire format
(peers/openai_server.py): loose JSON repair (deepresearch/llm/jsonparse.py), the structured-output mode
negotiation (deepresearch/llm/negotiation.py) and the one re-ask."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field

from deepresearch.graph.schemas import AnswerContext, ScreeningResult
from llm_client import LLMClient, LLMError, LLMResponse, StructuredOutputError, parse_json_loosely
from peers.openai_server import ScriptedOpenAI, format_kind, last_user_message
from tests._llm_helpers import HI, make_settings


class Plan(BaseModel):
    queries: list[str] = Field(min_length=1)
    rationale: str


class Queries(BaseModel):
    queries: list[str]


# --- structured() ------------------------------------------------------------------------------------

PLAN = {"queries": ["solar capacity 2024", "grid storage"], "rationale": "cover supply and storage"}


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("```json\n" + json.dumps(PLAN, indent=2) + "\n```", id="code-fence"),
        pytest.param(
            "<think>The user wants a plan. {not json}</think>Sure! Here it is:\n"
            + json.dumps(PLAN)
            + "\nLet me know if you need more.",
            id="think-and-prose",
        ),
        pytest.param(
            "{'queries': ['solar capacity 2024', 'grid storage'], 'rationale': 'cover supply and storage'}",
            id="single-quotes",
        ),
        pytest.param(
            '{"queries": ["solar capacity 2024", "grid storage",], "rationale": "cover supply and storage",}',
            id="trailing-commas",
        ),
        pytest.param(
            '{"queries": ["solar capacity 2024", "grid storage"], "rationale": "cover supply and storage',
            id="truncated-object",
        ),
    ],
)
async def test_structured_repairs_without_reask(server: tuple[ScriptedOpenAI, str], raw: str) -> None:
    scripted, url = server
    scripted.responder = lambda body: raw
    async with LLMClient(make_settings(url)) as llm:
        result = await llm.structured([{"role": "user", "content": "plan it"}], Plan)
    assert len(scripted.calls) == 1
    assert result.value == Plan.model_validate(PLAN)
    assert len(result.responses) == 1
    assert result.usage.total_tokens == result.responses[0].usage.total_tokens > 0


async def test_structured_bare_list_for_single_field_schema(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server
    scripted.responder = lambda body: '["a", "b"]'
    async with LLMClient(make_settings(url)) as llm:
        result = await llm.structured(HI, Queries)
    assert result.value.queries == ["a", "b"]
    assert len(scripted.calls) == 1


async def test_structured_output_mode_follows_settings(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server
    scripted.responder = lambda body: json.dumps(PLAN)
    async with LLMClient(make_settings(url, llm_json_mode=True)) as llm:
        await llm.structured(HI, Plan)
        await llm.complete(HI)
    async with LLMClient(make_settings(url, llm_structured_output="prompt")) as llm:
        await llm.structured(HI, Plan)
    async with LLMClient(make_settings(url)) as llm:  # auto: the most capable mode first
        await llm.structured(HI, Plan)
    legacy_json, plain_complete, prompt_only, negotiated = scripted.calls
    assert legacy_json["response_format"] == {"type": "json_object"}
    assert "response_format" not in plain_complete
    assert "response_format" not in prompt_only
    strict = negotiated["response_format"]["json_schema"]
    assert negotiated["response_format"]["type"] == "json_schema" and strict["strict"] is True
    assert strict["schema"]["required"] == ["queries", "rationale"]
    assert strict["schema"]["additionalProperties"] is False


async def test_structured_output_is_negotiated_down_the_ladder_once(
    server: tuple[ScriptedOpenAI, str],
) -> None:
    """A server that refuses json_schema and json_object+schema: the client steps down once, says so,
    and later calls ask in the mode that worked at once."""
    scripted, url = server
    scripted.responder = lambda body: json.dumps(PLAN)
    scripted.refuse_formats = {"json_schema", "json_object_schema"}
    told: list[tuple[str, str]] = []

    async def remember(mode: str, notes: str) -> None:
        told.append((mode, notes))

    async with LLMClient(make_settings(url), on_negotiated=remember) as llm:
        first = await llm.structured(HI, Plan)
        second = await llm.structured(HI, Plan)
        assert llm.output_mode == "json_object"
    assert first.value == second.value == Plan.model_validate(PLAN)
    kinds = [format_kind(body) for body in scripted.calls]
    assert kinds == ["json_schema", "json_object_schema", "json_object", "json_object"]
    assert len(told) == 1 and told[0][0] == "json_object"
    assert "json_schema refused" in told[0][1] and "json_object_schema refused" in told[0][1]

    # a remembered mode is used from the first request: no probing again
    async with LLMClient(make_settings(url), output_mode="json_object", on_negotiated=remember) as llm:
        await llm.structured(HI, Plan)
    assert format_kind(scripted.calls[-1]) == "json_object" and len(scripted.calls) == 5
    assert len(told) == 1


@pytest.mark.parametrize("refuse_status", [400, 500])
async def test_a_server_refusing_every_format_gets_prompt_only(
    server: tuple[ScriptedOpenAI, str], refuse_status: int
) -> None:
    """Refusals come as 400/422, or - llama-cpp-python's server - as a 500 naming response_format."""
    scripted, url = server
    scripted.responder = lambda body: json.dumps(PLAN)
    scripted.refuse_formats = {"json_schema", "json_object_schema", "json_object"}
    scripted.refuse_status = refuse_status
    async with LLMClient(make_settings(url)) as llm:
        await llm.structured(HI, Plan)
        assert llm.output_mode == "prompt"
    assert [format_kind(body) for body in scripted.calls] == [
        "json_schema",
        "json_object_schema",
        "json_object",
        None,
    ]


async def test_structured_reasks_with_reasons_by_meaning(server: tuple[ScriptedOpenAI, str]) -> None:
    """Valid JSON that means nothing (passage ids never shown) is re-asked with the reason."""
    scripted, url = server
    answers = iter(
        [
            '{"relevant": [{"passage_id": "S9.9", "relevance": 0.9, "reason": "made up"}]}',
            '{"relevant": [{"passage_id": "S1.1", "relevance": 0.9, "reason": "on topic"}]}',
        ]
    )
    scripted.responder = lambda body: next(answers)
    context = AnswerContext(passage_ids=frozenset({"S1.1", "S1.2"}))
    async with LLMClient(make_settings(url)) as llm:
        result = await llm.structured(HI, ScreeningResult, context)
    assert [p.passage_id for p in result.value.relevant] == ["S1.1"]
    assert len(scripted.calls) == 2 and len(result.problems) == 1
    assert "['S9.9'] were not among the passages shown" in last_user_message(scripted.calls[1])


async def test_structured_reasks_once_with_the_validation_error(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server

    def responder(body: dict[str, Any]) -> str:
        if last_user_message(body).startswith("Your previous answer could not be used"):
            return json.dumps(PLAN)
        return '{"queries": ["only queries"]}'  # rationale missing

    scripted.responder = responder
    messages = [{"role": "system", "content": "deepresearch prompt plan/v1\nPlan."}, *HI]
    async with LLMClient(make_settings(url)) as llm:
        result = await llm.structured(messages, Plan)

    assert result.value == Plan.model_validate(PLAN)
    assert len(scripted.calls) == 2
    assert len(result.responses) == 2
    reask = scripted.calls[1]["messages"]
    assert reask[: len(messages)] == messages
    assert reask[-2] == {"role": "assistant", "content": '{"queries": ["only queries"]}'}
    assert reask[-1]["role"] == "user"
    assert "rationale: Field required" in reask[-1]["content"]
    assert json.dumps(Plan.model_json_schema()) in reask[-1]["content"]
    assert scripted.calls_by_prompt() == {"plan/v1": 2}


async def test_structured_gives_up_after_one_reask(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server
    scripted.responder = lambda body: "I cannot help with that request."
    async with LLMClient(make_settings(url)) as llm:
        with pytest.raises(StructuredOutputError) as caught:
            await llm.structured(HI, Plan)
    error = caught.value
    assert len(scripted.calls) == 2
    assert isinstance(error, LLMError)
    assert str(error).startswith("the model's answer for Plan was not usable after one re-ask: ")
    assert len(error.problems) == 2
    assert "no JSON object or array found" in str(error)
    assert error.schema_name == "Plan"
    assert error.raw_excerpt == "I cannot help with that request."
    assert len(error.responses) == 2
    assert all(isinstance(r, LLMResponse) for r in error.responses)


async def test_structured_empty_object_does_not_pass_for_prose(server: tuple[ScriptedOpenAI, str]) -> None:
    class Notes(BaseModel):  # every field has a default: {} would validate
        notes: list[str] = []

    scripted, url = server
    scripted.responder = lambda body: "Sorry, {I cannot} do that."
    async with LLMClient(make_settings(url)) as llm:
        with pytest.raises(StructuredOutputError):
            await llm.structured(HI, Notes)
    assert len(scripted.calls) == 2


# --- parse_json_loosely ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("[1, 2]", [1, 2]),
        ('```\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
        ('```json\n{"a": 1', {"a": 1}),  # unterminated fence and object
        ('Here: {"a": "}"} and {"b": 2}', {"a": "}"}),
        ('See [note] below: {"a": {"b": [1, 2,]},}', {"a": {"b": [1, 2]}}),
        ("{'a': True, 'b': None, 'c': False}", {"a": True, "b": None, "c": False}),
        ('{"a": True, "b": None, "c": "True stays"}', {"a": True, "b": None, "c": "True stays"}),
        ('{"a": 1, "b": [1, 2', {"a": 1, "b": [1, 2]}),
        ('<think>{"wrong": 1}</think>{"right": 2}', {"right": 2}),
        ("{}", {}),
    ],
)
def test_parse_json_loosely_repairs(text: str, expected: Any) -> None:
    assert parse_json_loosely(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I cannot help",
        "",
        "   ",
        "<think>only reasoning</think>",
        "{I cannot help}",
        "Sorry {",
        '<think>{"a": 1}',
    ],
)
def test_parse_json_loosely_rejects_hopeless_text(text: str) -> None:
    with pytest.raises(ValueError):
        parse_json_loosely(text)
