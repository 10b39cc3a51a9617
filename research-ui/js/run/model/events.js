// The event reducer: the run's event log (SSE, replayed from seq 0 or tailed live) → a view model.
// Pure data, no DOM. Event contract (deepresearch/engine.py): per business stage a stage-level
// `tool_call` (with `title`, without `parent_call_id`) → sub-tool `tool_call`/`tool_result` pairs (with
// `parent_call_id`) → `checkpoint` (a business safety point: `indexed`, with `title`, `summary`, `fork_of`)
// → the stage's `tool_result`. LangGraph's own checkpoints (the input, the reflection loop, finalize) come
// as `graph_checkpoint` (`stage`, `checkpoint_id`, `next`): never offered as points to resume from, but
// the reflection's one ends its attempt, and they count as the latest checkpoint (continuing from an older
// one of either type forks).
// `run_status`, `message`, `error` and `end` frame each execution (a start, a resume or a fork) of the run.
// An LLM call's `tool_result` says how many answers the model gave (`answers`), how many were unusable
// (`unusable`) and, when the step used its extractive method instead, `fallback: {step, reason}`.
// `report_delta` events carry the report while the model writes it (`offset` into the text of `attempt`).

import {
  addItem,
  current,
  lastDoneStage,
  latestAttempt,
  onStageCall,
  onStageResult,
  reflectionAttempt,
  touch,
} from "./attempts.js";
import { onSubCall, onSubResult } from "./event-calls.js";
import { BUSINESS_STAGES, planRejection } from "../../core/nodes.js";

/**
 * @param {{run_id: string, question?: string, options?: any, engine?: string, status?: string,
 *   created_at?: string, queue_position?: number|null, pending_input?: any}} run
 */
export function createModel(run) {
  return {
    runId: run.run_id,
    question: run.question || "",
    options: run.options || {},
    engine: run.engine || null,
    createdAt: run.created_at || null,
    status: run.status || "queued",
    /** while the run waits for a free slot on its runner: how many runs go before it (null: not waiting) */
    queuedAhead: run.queue_position ? run.queue_position - 1 : null,
    /** while a long indexing of the run's documents runs: {done, total} files (null: not indexing) */
    indexing: /** @type {{done: number, total: number}|null} */ (null),
    lastSeq: 0,
    rev: 0,
    /** timeline entries in order: segment | stage | note | error | end */
    items: [],
    /** stage and reflection attempts (also in items) */
    attempts: [],
    /** stage-level call id → attempt */
    byCallId: new Map(),
    /** sub-tool call id → Call */
    calls: new Map(),
    /** every checkpoint seen: {id, stage, indexed, seq, forkOf} */
    checkpoints: [],
    lastCheckpointId: null,
    segment: null,
    cancelRequested: false,
    error: null,
    budgetStop: null,
    end: null,
    /** what the run waits for (input_requested): {kind, plan, since}; shown only while it waits */
    pendingInput: run.pending_input || null,
    /** the reason, when the run ended because its plan was rejected */
    planRejected: null,
    usage: {
      tokens: 0,
      cost_usd: 0,
      calls: 0,
      reused_calls: 0,
      tokens_saved: 0,
      model_answers: 0,
      unusable_answers: 0,
      /** @type {{step: string, reason: string}[]} */
      fallbacks: [],
    },
    /** the report as the model writes it (report_delta), until the checked report is written */
    draft: /** @type {{step: string, attempt: number, text: string}|null} */ (null),
    /** url → {url, status, bytes, title, error, reason, reused} from fetch sub-tool events */
    fetches: new Map(),
    firstTs: null,
    lastTs: null,
  };
}

/**
 * Apply one event (its JSON `data`). Events at or below the last seen seq are ignored, so a replay that
 * overlaps what the model already has changes nothing.
 * @returns {boolean} whether the model changed
 */
export function apply(model, ev) {
  if (typeof ev.seq === "number") {
    if (ev.seq <= model.lastSeq) return false;
    model.lastSeq = ev.seq;
  }
  model.firstTs ??= ev.ts;
  model.lastTs = ev.ts;
  switch (ev.type) {
    case "run_status":
      onRunStatus(model, ev);
      break;
    case "tool_call":
      if ("parent_call_id" in ev) onSubCall(model, ev);
      else onStageCall(model, ev);
      break;
    case "tool_result":
      if ("parent_call_id" in ev) onSubResult(model, ev);
      else onStageResult(model, ev);
      break;
    case "checkpoint":
      onCheckpoint(model, ev);
      break;
    case "graph_checkpoint":
      onGraphCheckpoint(model, ev);
      break;
    case "message":
      onMessage(model, ev);
      break;
    case "error":
      onError(model, ev);
      break;
    case "report_delta":
      onReportDelta(model, ev);
      break;
    case "end":
      onEnd(model, ev);
      break;
    case "input_requested":
      // the plan the run waits on; the page shows it while the status is waiting_for_input
      model.pendingInput = { kind: ev.kind, plan: ev.plan, since: ev.since };
      break;
    default:
      break;
  }
  model.rev += 1;
  return true;
}

// --- run framing ---------------------------------------------------------------------------------
function onRunStatus(model, ev) {
  if (ev.engine) model.engine = ev.engine;
  if (ev.status === "running") {
    startSegment(model, ev);
    model.status = "running";
    model.queuedAhead = null;
    model.indexing = null;
    model.error = null;
    model.budgetStop = null;
    model.end = null;
    model.cancelRequested = false;
    model.draft = null; // a report cut off by a pause is asked again from its start
    return;
  }
  model.status = ev.status;
  if (ev.status === "cancelled" || ev.status === "interrupted") stoppedNotFailed(model);
  if (ev.status !== "queued") stopOpenAttempts(model, ev.status, ev.ts);
  if (ev.orphaned) {
    addItem(model, {
      kind: "note",
      id: `note-${ev.seq}`,
      ts: ev.ts,
      text: "No runner was executing this run any more; it stopped at its latest checkpoint.",
    });
  }
}

function startSegment(model, ev) {
  const from = ev.from_checkpoint || null;
  const resumed = Boolean(ev.resumed);
  const fork = resumed && from !== null && from !== model.lastCheckpointId;
  const latestIndexed = [...model.checkpoints].reverse().find((c) => c.indexed);
  const at = from ? model.checkpoints.find((c) => c.id === from) : latestIndexed;
  const segment = addItem(model, {
    kind: "segment",
    id: `seg-${ev.seq}`,
    seq: ev.seq,
    ts: ev.ts,
    resumed,
    fromCheckpoint: from,
    atStage: at ? at.stage : null,
    fork,
    confirmed: false,
  });
  model.segment = segment;
  if (fork) supersedeAfter(model, from);
}

/** A fork abandons what happened after its checkpoint: those attempts are kept, marked superseded. */
function supersedeAfter(model, checkpointId) {
  const index = model.attempts.findIndex((a) => a.checkpointId === checkpointId);
  if (index === -1) return;
  for (const attempt of model.attempts.slice(index + 1)) {
    if (!attempt.superseded) {
      attempt.superseded = true;
      touch(model, attempt);
    }
  }
}

/** A pause ends the stage that was running with an error ("cancel requested"): it stopped, it did not fail. */
function stoppedNotFailed(model) {
  const since = model.segment ? model.items.indexOf(model.segment) : 0;
  for (const attempt of model.attempts) {
    if (attempt.status !== "failed" || model.items.indexOf(attempt) < since) continue;
    attempt.status = "stopped";
    attempt.error = null;
    touch(model, attempt);
  }
}

function stopOpenAttempts(model, status, ts) {
  for (const attempt of model.attempts) {
    if (attempt.status !== "running") continue;
    if (status === "failed") {
      attempt.status = "failed";
      attempt.error ??= model.error;
    } else {
      attempt.status = "stopped";
    }
    attempt.endTs = ts;
    touch(model, attempt);
  }
}

function onEnd(model, ev) {
  model.end = ev;
  model.status = ev.status;
  // a rejected plan stays rejected (continuing rejects it again): the server's reason says so
  model.planRejected = planRejection(ev.status, ev.error);
  if (ev.usage) model.usage = { ...model.usage, ...ev.usage };
  stopOpenAttempts(model, ev.status, ev.ts);
  const segment = model.segment;
  addItem(model, {
    kind: "end",
    id: `end-${ev.seq}`,
    ts: ev.ts,
    status: ev.status,
    error: ev.error || null,
    durationMs: segment ? Date.parse(ev.ts) - Date.parse(segment.ts) : null,
    atStage: lastDoneStage(model),
  });
}
// --- checkpoints, messages, errors -----------------------------------------------------------------
function recordCheckpoint(model, ev, indexed) {
  model.checkpoints.push({
    id: ev.checkpoint_id,
    stage: ev.stage,
    indexed,
    seq: ev.seq,
    forkOf: ev.fork_of || null,
  });
  model.lastCheckpointId = ev.checkpoint_id;
}

/** A business safety point: its stage's attempt gets its checkpoint and summary. */
function onCheckpoint(model, ev) {
  if (!ev.indexed) {
    onGraphCheckpoint(model, ev); // logs written before `graph_checkpoint` existed
    return;
  }
  recordCheckpoint(model, ev, true);
  const segment = model.segment;
  if (segment && !segment.confirmed) {
    // the first business checkpoint of an execution says for sure whether it forked
    segment.confirmed = true;
    const fork = Boolean(ev.fork_of);
    if (fork && !segment.fork) {
      segment.fork = true;
      segment.fromCheckpoint = ev.fork_of;
      segment.atStage = model.checkpoints.find((c) => c.id === ev.fork_of)?.stage || segment.atStage;
      supersedeAfter(model, ev.fork_of);
    }
    touch(model, segment);
  }
  const attempt = latestAttempt(model, ev.stage);
  if (attempt) {
    attempt.checkpointId = ev.checkpoint_id;
    if (ev.summary) attempt.summary = ev.summary;
    touch(model, attempt);
  }
}

/**
 * LangGraph's own checkpoint: recorded (a resume from it is no fork) but not indexed; the reflection's
 * one is the end of its attempt, which has no stage-level `tool_result`.
 */
function onGraphCheckpoint(model, ev) {
  recordCheckpoint(model, ev, false);
  if (ev.stage !== "reflection") return;
  const attempt = latestAttempt(model, "reflection");
  if (attempt && attempt.status === "running") {
    attempt.status = "done";
    attempt.endTs = ev.ts;
    attempt.checkpointId = ev.checkpoint_id;
    touch(model, attempt);
  }
}

function onMessage(model, ev) {
  const text = String(ev.text || "");
  if (ev.queued) {
    model.queuedAhead = Number(ev.ahead) || 0; // the run waits for a slot: said in the headline
    return;
  }
  if (ev.total != null) {
    // indexing the run's documents, before its first stage: said in the headline, not the timeline
    model.indexing = { done: Number(ev.indexed) || 0, total: Number(ev.total) || 0 };
    return;
  }
  if (BUSINESS_STAGES.has(ev.stage)) {
    const attempt = latestAttempt(model, ev.stage);
    if (!attempt) return;
    attempt.message = text;
    const round = /round (\d+)/.exec(text);
    if (ev.stage === "search_web" && round) attempt.round = Number(round[1]);
    touch(model, attempt);
  } else if (ev.stage === "reflection") {
    const attempt = reflectionAttempt(model, ev);
    const match = /^Reflection after round (\d+):\s*(.*?)\.?$/.exec(text);
    attempt.round = match ? Number(match[1]) : attempt.round;
    attempt.summary = match ? match[2] : text;
    attempt.loopAgain = /gap-filling quer/.test(text);
    touch(model, attempt);
  } else if (ev.stage === "finalize_report") {
    addItem(model, { kind: "note", id: `note-${ev.seq}`, ts: ev.ts, text: "Report files verified on disk." });
  } else if (text) {
    if (/^Cancel requested/.test(text)) model.cancelRequested = true;
    addItem(model, { kind: "note", id: `note-${ev.seq}`, ts: ev.ts, text });
  }
}

function onError(model, ev) {
  const message = String(ev.message || "the run failed");
  model.error = message;
  const open = current(model).filter((a) => a.status === "running" || a.status === "failed");
  const attempt = open.length ? open[open.length - 1] : null;
  if (/^budget:/.test(message)) {
    model.budgetStop = message;
    if (attempt) {
      attempt.status = "stopped";
      attempt.error = null;
      attempt.stopReason = message;
      touch(model, attempt);
    }
    return;
  }
  if (attempt && !attempt.superseded) {
    attempt.status = "failed";
    attempt.error ??= message;
    attempt.endTs ??= ev.ts;
    touch(model, attempt);
    return;
  }
  addItem(model, { kind: "error", id: `error-${ev.seq}`, ts: ev.ts, message });
}

/**
 * A piece of the report as the model writes it. Pieces of one attempt follow each other by `offset`; the
 * re-ask (a new `attempt`) starts the text over; a new execution (a resume) cleared it already.
 */
function onReportDelta(model, ev) {
  const delta = String(ev.delta ?? "");
  const attempt = Number(ev.attempt) || 1;
  const offset = Number(ev.offset) || 0;
  const draft = model.draft;
  const sameWriting = draft && draft.step === ev.step && draft.attempt === attempt && offset > 0;
  const before = sameWriting ? draft.text.slice(0, offset) : "";
  model.draft = { step: String(ev.step || ""), attempt, text: before + delta };
}
