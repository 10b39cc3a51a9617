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

/**
 * A node of the graph as the server describes it (config.json `stages`).
 * @typedef {{key: string, title: string, short: string, description: string, headline: string,
 *   business: boolean}} Stage
 */

/** The graph's nodes in order (the business stages plus the reflection loop); filled by setStages. */
export const NODES = /** @type {Stage[]} */ ([]);
export const NODE_BY_KEY = /** @type {Map<string, Stage>} */ (new Map());
export const BUSINESS_STAGES = /** @type {Set<string>} */ (new Set());
const ORDER = /** @type {Map<string, number>} */ (new Map());

/**
 * Take the server's stages. The tables above are filled in place, so every module that imported them sees
 * the server's list: call it once at boot, before any view or model is built.
 * @param {Stage[]} stages
 */
export function setStages(stages) {
  NODES.splice(0, NODES.length, ...stages);
  NODE_BY_KEY.clear();
  BUSINESS_STAGES.clear();
  ORDER.clear();
  stages.forEach((node, i) => {
    NODE_BY_KEY.set(node.key, node);
    ORDER.set(node.key, i);
    if (node.business) BUSINESS_STAGES.add(node.key);
  });
}

export const ACTIVE = new Set(["queued", "running"]);
export const STATUS_LABEL = {
  queued: "Queued",
  running: "Running",
  cancelled: "Paused",
  interrupted: "Interrupted",
  failed: "Failed",
  completed: "Completed",
};

const REVIEWER_NAMES = { fact: "Fact reviewer", implication: "Implication reviewer", risk: "Risk reviewer" };
const PROMPT_NAMES = {
  plan: "Plan sub-questions and queries",
  screen: "Screen passages",
  reflect: "Judge coverage",
  review: "Reviewer",
  critic: "Critic",
  report: "Write the report",
};

/**
 * @typedef {{id: string, stage: string, tool: string, kind: string, label: string, target: string,
 *   status: string, reused: boolean, tokens?: number, costUsd?: number, durationMs?: number, error?: string,
 *   reason?: string, results?: number, failures?: any[], bytes?: number, title?: string, ts: string,
 *   rev: number}} Call
 */

/**
 * @param {{run_id: string, question?: string, options?: any, engine?: string, status?: string,
 *   created_at?: string}} run
 */
export function createModel(run) {
  return {
    runId: run.run_id,
    question: run.question || "",
    options: run.options || {},
    engine: run.engine || null,
    createdAt: run.created_at || null,
    status: run.status || "queued",
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

function touch(model, item) {
  item.rev += 1;
  model.rev += 1;
}

function addItem(model, item) {
  model.items.push({ rev: 0, ...item });
  return model.items[model.items.length - 1];
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

// --- stages ----------------------------------------------------------------------------------------
function newAttempt(model, stage, ev) {
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

function latestAttempt(model, stage) {
  for (let i = model.attempts.length - 1; i >= 0; i -= 1) {
    const attempt = model.attempts[i];
    if (attempt.stage === stage && !attempt.superseded) return attempt;
  }
  return null;
}

function lastDoneStage(model) {
  const done = current(model).filter((a) => a.status === "done");
  return done.length ? done[done.length - 1].stage : null;
}

function onStageCall(model, ev) {
  if (!BUSINESS_STAGES.has(ev.stage)) return;
  const attempt = newAttempt(model, ev.stage, ev);
  attempt.callId = ev.call_id;
  model.byCallId.set(ev.call_id, attempt);
}

function onStageResult(model, ev) {
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
function reflectionAttempt(model, ev) {
  const last = latestAttempt(model, "reflection");
  if (last && last.status === "running") return last;
  return newAttempt(model, "reflection", ev);
}

function attemptFor(model, ev) {
  const parent = ev.parent_call_id ? model.byCallId.get(ev.parent_call_id) : null;
  if (parent) return parent;
  if (ev.stage === "reflection") return reflectionAttempt(model, ev);
  const latest = latestAttempt(model, ev.stage);
  if (latest && latest.status === "running") return latest;
  return newAttempt(model, ev.stage, ev);
}

// --- sub-tool calls --------------------------------------------------------------------------------
export function kindOf(tool) {
  if (tool === "web.search") return "search";
  if (tool === "web.fetch" || tool === "corpus.read") return "fetch";
  if (tool === "workspace.write") return "write";
  if (tool?.startsWith("llm.")) return "llm";
  return "tool";
}

function promptOf(ev) {
  const prompt = ev.args?.prompt || String(ev.label || "").replace(/^llm:\s*/, "");
  return prompt.split("/")[0];
}

/** What a call is about, in plain words: the query, the URL, the file, the reviewer. */
function targetOf(ev, kind) {
  const args = ev.args || {};
  const label = String(ev.label || ev.tool_name || "");
  if (kind === "search") return args.query || label.replace(/^search:\s*/, "");
  if (kind === "fetch") return args.url || label.replace(/^fetch:\s*/, "");
  if (kind === "write") return (args.path || label.replace(/^write:\s*/, "")).split("/").pop();
  if (kind === "llm") {
    const prompt = promptOf(ev);
    if (prompt === "review") {
      // the engine labels each reviewer's call "review: fact reviewer"
      const who = /^review:\s*(\w+) reviewer/.exec(label);
      if (who) return REVIEWER_NAMES[who[1]] || `${who[1]} reviewer`;
    }
    return PROMPT_NAMES[prompt] || prompt || label;
  }
  return label;
}

function onSubCall(model, ev) {
  const kind = kindOf(ev.tool_name);
  const existing = model.calls.get(ev.call_id);
  if (existing) return;
  /** @type {Call} */
  const call = {
    id: ev.call_id,
    stage: ev.stage,
    tool: ev.tool_name,
    kind,
    label: ev.label || ev.tool_name,
    target: targetOf(ev, kind),
    status: "running",
    reused: Boolean(ev.reused),
    ts: ev.ts,
    rev: 0,
  };
  model.calls.set(call.id, call);
  const attempt = attemptFor(model, ev);
  attempt.calls.push(call.id);
  touch(model, attempt);
  if (kind === "fetch") {
    model.fetches.set(call.target, {
      url: call.target,
      status: "running",
      reused: call.reused,
      round: attempt.round,
    });
  }
}

function onSubResult(model, ev) {
  if (!model.calls.has(ev.call_id)) onSubCall(model, ev); // a result without its call: show it anyway
  const call = model.calls.get(ev.call_id);
  const out = ev.output || {};
  call.reused = Boolean(ev.reused);
  call.status = ev.ok ? (call.reused ? "reused" : "ok") : "failed";
  call.tokens = ev.tokens || 0;
  call.costUsd = ev.cost_usd || 0;
  call.durationMs = ev.duration_ms;
  call.error = ev.error || undefined;
  if (call.kind === "search") {
    call.results = out.results;
    call.failures = out.failures || [];
  } else if (call.kind === "fetch") {
    if (out.ok === false) {
      call.status = "failed";
      call.error = out.error || "not fetched";
      call.reason = out.reason;
    }
    call.bytes = out.bytes;
    call.title = out.title;
    const fetch = model.fetches.get(call.target) || { url: call.target };
    Object.assign(fetch, {
      status: call.status === "failed" ? "failed" : "ok",
      reused: call.reused,
      bytes: out.bytes,
      title: out.title || fetch.title,
      error: call.error,
      reason: call.reason,
    });
    model.fetches.set(call.target, fetch);
  } else if (call.kind === "write") {
    call.bytes = out.size;
  }
  if (ev.fallback && typeof ev.fallback === "object") {
    call.fallback = { step: String(ev.fallback.step || ""), reason: String(ev.fallback.reason || "") };
    // as the server counts them: a fallback answered again from its receipt is the same one
    const known = model.usage.fallbacks.some(
      (f) => f.step === call.fallback.step && f.reason === call.fallback.reason,
    );
    if (!known) model.usage.fallbacks = [...model.usage.fallbacks, call.fallback];
  }
  if (call.reused) {
    model.usage.reused_calls += 1;
    model.usage.tokens_saved += call.tokens;
  } else {
    model.usage.calls += 1;
    model.usage.tokens += call.tokens;
    model.usage.cost_usd += call.costUsd;
    model.usage.model_answers += Number(ev.answers) || 0;
    model.usage.unusable_answers += Number(ev.unusable) || 0;
  }
  call.rev += 1;
  const attempt = [...model.attempts].reverse().find((a) => a.calls.includes(call.id));
  if (attempt) touch(model, attempt);
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

// --- selectors -----------------------------------------------------------------------------------
export function isActive(model) {
  return ACTIVE.has(model.status);
}

export function runningAttempt(model) {
  const running = current(model).filter((a) => a.status === "running");
  return running.length ? running[running.length - 1] : null;
}

/** Search rounds the current branch has started. */
export function rounds(model) {
  return current(model)
    .filter((a) => a.stage === "search_web")
    .reduce((n, a) => Math.max(n, a.round), 0);
}

export function criticEnabled(model) {
  return model.options?.requires_critic_review !== false;
}

/**
 * State of each graph node: the latest attempt of its stage in the current branch.
 * @returns {Map<string, {status: string, attempt: any}>}
 */
export function nodeStates(model) {
  const states = new Map(NODES.map((n) => [n.key, { status: "pending", attempt: null }]));
  for (const attempt of current(model)) {
    states.set(attempt.stage, { status: attempt.status, attempt });
  }
  // a later search round resets the nodes after it until they run again
  const search = states.get("search_web").attempt;
  if (search) {
    for (const key of ["fetch_sources", "screen_evidence", "reflection"]) {
      const state = states.get(key);
      if (state.attempt && model.attempts.indexOf(state.attempt) < model.attempts.indexOf(search)) {
        states.set(key, { status: "pending", attempt: state.attempt, previous: state.attempt.status });
      }
    }
  }
  if (!criticEnabled(model) && states.get("critic_review").status === "pending") {
    states.set("critic_review", { status: "skipped", attempt: null });
  }
  return states;
}

/** Business stages still to come in the current branch (for the dim "upcoming" rows). */
export function upcoming(model) {
  if (model.status === "completed") return [];
  const last = current(model).at(-1);
  let position = last ? ORDER.get(last.stage) : -1;
  if (last && last.stage === "reflection" && last.loopAgain) position = ORDER.get("search_web") - 1;
  return NODES.filter(
    (n, i) => i > position && n.key !== "reflection" && (n.key !== "critic_review" || criticEnabled(model)),
  );
}
