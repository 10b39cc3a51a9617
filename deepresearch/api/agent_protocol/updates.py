"""POST /threads/{id}/state, LangGraph's "update the state as a node", is our fork: a research's
checkpoints are its record and never change, so the update makes a new research from the checkpoint with
the changed values (deepresearch/service/steering.py, create_fork), held until a run continues it. The
thread then is that fork: its state, history and next runs are the fork's; the research it came from stays
under /api/runs (its id is the fork's `forked_from`), and deleting the thread deletes both.

Which values may change is what a fork can change without lying about what was found: the plan's
sub-questions, queries and rationale, the options, and fewer sources. A key sent with the value it has is
accepted (a client may send back the state it read with one edit); any other change is a 422 naming it.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from deepresearch.api.agent_protocol.lifecycle import Protocol
from deepresearch.api.agent_protocol.models import CheckpointRef, StateUpdate
from deepresearch.api.agent_protocol.state import jsonable, snapshot
from deepresearch.engine.state_patch import StatePatch
from deepresearch.errors import InvalidInput, RunConflict
from deepresearch.service.steering import ForkRequest, create_fork
from deepresearch.store import ACTIVE_STATUSES, RunRecord

PLAN_KEYS = ("sub_questions", "queries", "rationale")
UPDATABLE = "plan (its sub_questions, queries and rationale), options, sources (fewer: the ones to keep)"


def _refuse(key: str, why: str) -> InvalidInput:
    return InvalidInput(f"values.{key}: {why}; what an update may change: {UPDATABLE}", f"values.{key}")


def _plan_patch(given: Any, plan: dict[str, Any]) -> dict[str, Any]:
    """The StatePatch fields for an edited plan: an outline edit, and queries dropped and added."""
    if not isinstance(given, dict):
        raise _refuse("plan", "must be an object (the plan as the state has it, edited)")
    for key, value in given.items():
        if key not in PLAN_KEYS and value != jsonable(plan.get(key)):
            raise _refuse(f"plan.{key}", "cannot be changed (the planner's; a fork keeps it)")
    current = list(plan.get("queries") or [])
    queries = given.get("queries", current)
    if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        raise _refuse("plan.queries", "must be a list of queries")
    wanted = {q.casefold() for q in queries}
    kept = [q for q in current if q.casefold() in wanted]
    known = {q.casefold() for q in current}
    patch: dict[str, Any] = {
        "drop_queries": [q for q in current if q.casefold() not in wanted],
        "add_queries": [q for q in queries if q.casefold() not in known],
    }
    sub_questions = given.get("sub_questions", plan.get("sub_questions"))
    rationale = given.get("rationale", plan.get("rationale"))
    if sub_questions != plan.get("sub_questions") or rationale != plan.get("rationale"):
        if not kept:
            raise _refuse("plan.queries", "keep at least one of the plan's queries when the outline changes")
        patch["sub_questions"] = {"sub_questions": sub_questions, "queries": kept, "rationale": rationale}
    return patch


def _sources_patch(given: Any, sources: list[dict[str, Any]]) -> list[str]:
    """The URLs to drop: the current sources the update leaves out (a source cannot be added)."""
    if not isinstance(given, list):
        raise _refuse("sources", "must be the list of sources to keep")
    keep = {s.get("url") if isinstance(s, dict) else s for s in given}
    present = {s["url"] for s in sources}
    unknown = sorted(str(u) for u in keep - present)
    if unknown:
        raise _refuse("sources", f"{unknown[0]!r} is not a source of the research (add a query instead)")
    return sorted(present - keep)


def state_patch(values: dict[str, Any], current: dict[str, Any]) -> StatePatch:
    """The fork's patch for the update's `values` over the checkpoint's `current` values."""
    fields: dict[str, Any] = {}
    for key, value in values.items():
        if value == jsonable(current.get(key)):
            continue  # sent back as it was
        if key == "plan":
            fields |= _plan_patch(value, current.get("plan") or {})
        elif key == "options":
            if not isinstance(value, dict):
                raise _refuse("options", "must be an object")
            old = jsonable(current.get("options") or {})
            fields["options"] = {k: v for k, v in value.items() if old.get(k) != v}
        elif key == "sources":
            fields["drop_sources"] = _sources_patch(value, current.get("sources") or [])
        else:
            raise _refuse(key, "cannot be changed: a fork keeps what the research found and wrote")
    try:
        return StatePatch.model_validate({k: v for k, v in fields.items() if v})
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(map(str, problem["loc"]))
        raise InvalidInput(f"values: {where}: {problem['msg']}", "values") from None


async def update_state(
    proto: Protocol, thread_id: str, research: RunRecord, body: StateUpdate
) -> CheckpointRef:
    """Fork the thread's research at the checkpoint with the values changed; the thread becomes the fork."""
    if research.status in ACTIVE_STATUSES:
        raise RunConflict(
            f"the thread's research is {research.status}; update its state once it has stopped (or "
            "cancel its run)"
        )
    service = proto.service
    checkpoint_id = body.checkpoint_id or (body.checkpoint or {}).get("checkpoint_id")
    if checkpoint_id is None:
        indexed = await service.views.checkpoint_records(research.run_id)
        if not indexed:
            raise RunConflict("the thread's research has no checkpoint yet: there is no state to update")
        checkpoint_id = indexed[-1].checkpoint_id
    record = await service.views.checkpoint(research.run_id, str(checkpoint_id))  # 404 for an unknown one
    if body.as_node not in (None, record.stage):
        raise InvalidInput(
            f"as_node: this checkpoint's values were written by {record.stage!r}; an update is recorded as "
            "that stage (which stages run next follows from what changed)",
            "as_node",
        )
    current = dict((await snapshot(service, research, record.checkpoint_id)).values)
    patch = state_patch(dict(body.values or {}), current)
    request = ForkRequest(checkpoint_id=record.checkpoint_id, patch=patch)
    fork = await create_fork(service, research.run_id, request, proto.principal, held=True)
    await proto.adopt(thread_id, research.run_id, fork.run)
    if research.status == "waiting_for_input":
        # its plan review is answered by the fork now (it asks again, on the updated plan)
        await service.cancel(research.run_id, "the thread moved to a fork of it (a state update)")
    return CheckpointRef(
        thread_id=thread_id,
        checkpoint_ns=fork.checkpoint.checkpoint_ns,
        checkpoint_id=fork.checkpoint.checkpoint_id,
    )
