// Stage attempts of the view model: one per execution of a stage (or of the reflection loop), with its
// sub-tool calls. Used by the reducer (events.js, event-calls.js).

import { BUSINESS_STAGES, NODE_BY_KEY } from "../../core/nodes.js";

export function touch(model, item) {
  item.rev += 1;
  model.rev += 1;
}

export function addItem(model, item) {
  model.items.push({ rev: 0, ...item });
  return model.items[model.items.length - 1];
}

export function newAttempt(model, stage, ev) {
  const node = NODE_BY_KEY.get(stage);
  const attempt = addItem(model, {
    kind: "stage",
    id: `stage-${ev.seq}`,
    stage,
    title: ev.title || node?.title || stage,
    callId: null,
    status: "running",
    startTs: ev.ts,
    endTs: null,
    round: roundFor(model, stage),
    summary: "",
    message: "",
    error: null,
    stopReason: null,
    checkpointId: null,
    artifactPath: null,
    calls: [],
    superseded: false,
    loopAgain: false,
  });
  model.attempts.push(attempt);
  return attempt;
}

/** Search rounds: done searches of the current branch (+1 for the one starting). */
function roundFor(model, stage) {
  const searches = current(model).filter((a) => a.stage === "search_web");
  const done = searches.filter((a) => a.status === "done").length;
  if (stage === "search_web") return done + 1;
  return Math.max(1, done);
}

/** Attempts that belong to the run's current branch (not abandoned by a fork). */
export function current(model) {
  return model.attempts.filter((a) => !a.superseded);
}

export function latestAttempt(model, stage) {
  for (let i = model.attempts.length - 1; i >= 0; i -= 1) {
    const attempt = model.attempts[i];
    if (attempt.stage === stage && !attempt.superseded) return attempt;
  }
  return null;
}

export function lastDoneStage(model) {
  const done = current(model).filter((a) => a.status === "done");
  return done.length ? done[done.length - 1].stage : null;
}

export function onStageCall(model, ev) {
  if (!BUSINESS_STAGES.has(ev.stage)) return;
  const attempt = newAttempt(model, ev.stage, ev);
  attempt.callId = ev.call_id;
  model.byCallId.set(ev.call_id, attempt);
}

export function onStageResult(model, ev) {
  const attempt = model.byCallId.get(ev.call_id) || latestAttempt(model, ev.stage);
  if (!attempt) return;
  attempt.endTs = ev.ts;
  if (ev.ok) {
    attempt.status = "done";
    attempt.summary = ev.summary || attempt.summary;
    attempt.artifactPath = ev.artifact_path || null;
    attempt.checkpointId = ev.langgraph_checkpoint_id || attempt.checkpointId;
  } else if (/^budget:/.test(ev.error || "")) {
    attempt.status = "stopped";
    attempt.stopReason = ev.error;
  } else {
    attempt.status = "failed";
    attempt.error = ev.error || "the stage failed";
  }
  touch(model, attempt);
}

/** The reflection is not a business stage: its attempt opens with its first event. */
export function reflectionAttempt(model, ev) {
  const last = latestAttempt(model, "reflection");
  if (last && last.status === "running") return last;
  return newAttempt(model, "reflection", ev);
}

export function attemptFor(model, ev) {
  const parent = ev.parent_call_id ? model.byCallId.get(ev.parent_call_id) : null;
  if (parent) return parent;
  if (ev.stage === "reflection") return reflectionAttempt(model, ev);
  const latest = latestAttempt(model, ev.stage);
  if (latest && latest.status === "running") return latest;
  // a call made for a stage after it finished, outside any stage call (the plan review writes the edited
  // plan.json): it joins the finished attempt; a new one would never end and be drawn paused for good
  if (latest && latest.status === "done" && !ev.parent_call_id) return latest;
  return newAttempt(model, ev.stage, ev);
}
