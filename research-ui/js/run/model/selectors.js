// Selectors: what the views ask of the view model (pure, no DOM).

import { current } from "./attempts.js";
import { ACTIVE, NODES, ORDER } from "../../core/nodes.js";

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
