// Progress in plain language: a headline that changes only when the run moves to another step (it is
// announced to screen readers), and a detail line with the live counts (not announced).

import { current } from "./model/attempts.js";
import { plainWords } from "../core/dom.js";
import { NODE_BY_KEY } from "../core/nodes.js";
import { runningAttempt, upcoming } from "./model/selectors.js";

/** What a person is told while a stage runs (the server's words). */
const stageHeadline = (key) => NODE_BY_KEY.get(key)?.headline;

/**
 * @param {ReturnType<import("./model/events.js").createModel>} model
 * @param {{pausing: boolean}} local
 * @returns {{headline: string, detail: string}}
 */
export function describe(model, local) {
  const lastDone = current(model)
    .filter((a) => a.status === "done")
    .at(-1);
  const after = lastDone ? ` after “${NODE_BY_KEY.get(lastDone.stage)?.title}”` : "";
  switch (model.status) {
    case "queued":
      if (model.queuedAhead != null) {
        const ahead = model.queuedAhead;
        return {
          headline: "Queued: the runner is busy with other runs.",
          detail: `${ahead ? `${ahead} ${ahead === 1 ? "run goes" : "runs go"} first; then` : "It is next:"} it starts by itself, first come, first served.`,
        };
      }
      return { headline: "Starting…", detail: "The runner picks the run up in a moment." };
    case "running":
      if (local.pausing || model.cancelRequested) {
        return {
          headline: "Pausing: waiting for the run to stop at its next checkpoint…",
          detail: "Calls already in flight finish and keep their results, so nothing is paid for twice.",
        };
      }
      return running(model);
    case "cancelled":
      if (model.planRejected) {
        return {
          headline: "Ended: you rejected the plan.",
          detail: `${capitalise(plainWords(model.planRejected))}. To try another plan, fork the run from its plan checkpoint.`,
        };
      }
      if (model.budgetStop) {
        return { headline: "Stopped: a budget limit was reached.", detail: `${plainWords(model.budgetStop)}: raise it to continue.` };
      }
      return {
        headline: `Paused${after}. Nothing finished is lost.`,
        detail: "Continue whenever you like, or pick an earlier checkpoint to fork from.",
      };
    case "waiting_for_input":
      return {
        headline: "Waiting for you: review the plan.",
        detail:
          "Approve it, change its sub-questions and queries, or reject it. Nothing is searched until you answer; " +
          "the run can wait as long as you like.",
      };
    case "interrupted":
      return {
        headline: `Interrupted${after}: the runner stopped.`,
        detail: "It continues by itself when the runner starts again, or continue it now.",
      };
    case "failed": {
      const failed = current(model)
        .filter((a) => a.status === "failed")
        .at(-1);
      const where = failed ? ` at “${NODE_BY_KEY.get(failed.stage)?.title}”` : "";
      return {
        headline: `Failed${where}.`,
        detail: `${model.error ? `${plainWords(model.error)}.` : "The run stopped with an error."} It can be resumed from its last checkpoint.`,
      };
    }
    case "completed": {
      const report = current(model)
        .filter((a) => a.stage === "write_report" && a.status === "done")
        .at(-1);
      return {
        headline: "Done: the report is ready.",
        detail: report?.summary ? capitalise(`${report.summary}.`) : "",
      };
    }
    default:
      return { headline: model.status, detail: "" };
  }
}

function running(model) {
  const attempt = runningAttempt(model);
  if (!attempt) return between(model);
  const calls = attempt.calls.map((id) => model.calls.get(id)).filter(Boolean);
  const of = (kind) => calls.filter((c) => c.kind === kind);
  const finished = (list) => list.filter((c) => c.status !== "running").length;
  let headline = stageHeadline(attempt.stage) || `${attempt.title}.`;
  let detail = "";
  switch (attempt.stage) {
    case "search_web": {
      const searches = of("search");
      headline = attempt.round > 1 ? `Searching again (round ${attempt.round}) to fill the gaps.` : headline;
      const results = searches.reduce((n, c) => n + (c.results || 0), 0);
      detail = searches.length
        ? `${finished(searches)} of ${searches.length} queries answered, ${results} results so far.`
        : "";
      break;
    }
    case "fetch_sources": {
      const fetches = of("fetch");
      const failed = fetches.filter((c) => c.status === "failed").length;
      const ok = fetches.filter((c) => c.status === "ok" || c.status === "reused").length;
      detail = fetches.length
        ? `${ok} fetched, ${failed} failed, ${fetches.length - ok - failed} in progress.`
        : "";
      break;
    }
    case "screen_evidence":
    case "analyze_findings": {
      const llm = of("llm");
      const unit = attempt.stage === "screen_evidence" ? "sub-questions screened" : "reviewers done";
      detail = llm.length ? `${finished(llm)} of ${llm.length} ${unit}.` : "";
      break;
    }
    default:
      detail = "";
  }
  return { headline, detail };
}

/** Nothing is running this instant: the graph is moving from one stage to the next. */
function between(model) {
  const last = current(model).at(-1);
  const indexing = model.indexing;
  if (indexing && indexing.done < indexing.total) {
    return {
      headline: "Indexing your documents…",
      detail: `${indexing.done} of ${indexing.total} files indexed.`,
    };
  }
  if (!last) return { headline: "Starting…", detail: "" };
  if (last.stage === "screen_evidence") return { headline: stageHeadline("reflection"), detail: "" };
  if (last.stage === "write_report") return { headline: "Verifying the report files on disk.", detail: "" };
  // between two stages the headline must not run ahead of the graph: the next stage has not started yet
  const next = upcoming(model)[0];
  const done = NODE_BY_KEY.get(last.stage)?.title;
  if (!next) return { headline: "Working…", detail: "" };
  return { headline: `Starting “${next.title}”…`, detail: done ? `“${done}” is done and saved.` : "" };
}

function capitalise(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
