// The reducer's part for sub-tool calls (`tool_call`/`tool_result` with `parent_call_id`): searches,
// fetches, writes and LLM calls, and the usage they add up to.

import { attemptFor, touch } from "./attempts.js";

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
 *   reason?: string, results?: number, failures?: Record<string, string>, bytes?: number, title?: string,
 *   ts: string, rev: number}} Call
 */

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

export function onSubCall(model, ev) {
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

export function onSubResult(model, ev) {
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
    call.failures = out.failures || {}; // by source: its message
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
