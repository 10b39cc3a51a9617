// The activity timeline: each execution of the run (start, continue, fork) with its stages in order and,
// under each stage, its sub-tool calls as they stream. Keyed DOM updates: an element is rebuilt only when
// its item changed, so focus, selection and expanded/collapsed state survive the stream.

import { callDetails, plainError } from "./call-details.js";
import { bytes, clock, compact, duration, fill, h, plainWords, setText } from "../core/dom.js";
import { NODE_BY_KEY } from "../core/nodes.js";
import { isActive, upcoming } from "./model/selectors.js";

const STATE_WORD = {
  running: "Running",
  done: "Done",
  failed: "Failed",
  stopped: "Paused here",
  pending: "Waiting",
};

const KIND_WORD = { search: "search", fetch: "fetch", llm: "LLM", write: "file", tool: "tool" };
/** Stages inside the search → reflect loop carry their round. */
const LOOP_STAGES = new Set(["search_web", "fetch_sources", "screen_evidence", "reflection"]);
const REASONS = {
  http_status: "HTTP error",
  blocked: "blocked: not a public address",
  too_large: "too large",
  content_type: "not a readable page",
  too_many_redirects: "too many redirects",
  empty: "no text in it",
  corpus: "not readable from the corpus",
};

/** A fetch error without the URL it repeats, or the reason in words. */
export function fetchProblem(url, error, reason) {
  const text = String(error || "")
    .replace(url || "\u0000", "")
    .trim();
  return text || REASONS[reason] || reason || "not fetched";
}

export class TimelineView {
  /**
   * @param {HTMLElement} list the <ol>
   * @param {{onResume: () => void, onCheckpoints: () => void}} actions
   */
  constructor(list, actions) {
    this.list = list;
    this.actions = actions;
    /** @type {Map<string, {el: HTMLElement, key: string, rows?: Map<string, {el: HTMLElement, rev: number}>}>} */
    this.entries = new Map();
    this.upcoming = h("li", { class: "tl-upcoming" });
    /** @type {Map<string, boolean>} what the person chose with a block's toggle: id → collapsed */
    this.collapsed = new Map();
    /** call ids whose details the person opened */
    this.openCalls = new Set();
    /** @type {import("./call-details.js").CallFiles} */
    this.files = {};
    /** @type {Map<string, {el: HTMLElement, call: any}>} every call row, for the details */
    this.callRows = new Map();
    list.append(this.upcoming);
  }

  /**
   * The run's files the call details read; open details are redrawn with what is new.
   * @param {import("./call-details.js").CallFiles} files
   */
  setFiles(files) {
    for (const [name, value] of Object.entries(files)) if (value !== undefined) this.files[name] = value;
    for (const id of this.openCalls) {
      const row = this.callRows.get(id);
      if (row) this.renderCall(row.el, row.call);
    }
  }

  reset() {
    this.entries.clear();
    this.collapsed.clear();
    this.openCalls.clear();
    this.callRows.clear();
    this.files = {};
    fill(this.list, this.upcoming);
  }

  /** @param {ReturnType<import("./model/events.js").createModel>} model */
  render(model) {
    const latestFailed = [...model.attempts].reverse().find((a) => a.status === "failed" && !a.superseded);
    for (const item of model.items) {
      const key = `${item.rev}|${model.status}|${item === latestFailed}`;
      let entry = this.entries.get(item.id);
      if (!entry) {
        entry = { el: h("li"), key: "" };
        this.entries.set(item.id, entry);
        this.list.insertBefore(entry.el, this.upcoming);
      }
      if (entry.key === key) continue;
      entry.key = key;
      if (item.kind === "stage") this.renderStage(entry, item, model, item === latestFailed);
      else this.renderMarker(entry, item, model);
    }
    this.renderUpcoming(model);
  }

  // --- stage attempts --------------------------------------------------------------------------------
  renderStage(entry, attempt, model, isLatestFailure) {
    const el = entry.el;
    el.className = "tl-item tl-stage";
    el.dataset.stage = attempt.stage;
    el.dataset.status = attempt.status;
    el.toggleAttribute("data-superseded", attempt.superseded);
    if (!entry.rows) {
      entry.rows = new Map();
      const callsId = `calls-${attempt.id}`;
      entry.head = h("div", { class: "tl-head" });
      entry.summary = h("p", { class: "tl-summary" });
      entry.problem = h("div", { class: "tl-problem" });
      entry.calls = h("ul", { class: "tl-calls", id: callsId, "aria-label": `${attempt.title}: tool calls` });
      entry.toggle = h("button", {
        type: "button",
        class: "tl-title",
        "aria-expanded": "true",
        "aria-controls": callsId,
        on: { click: () => this.toggle(entry, attempt.id) },
      });
      fill(
        el,
        h("span", { class: "tl-marker", "aria-hidden": "true" }),
        h("div", { class: "tl-body" }, entry.head, entry.summary, entry.problem, entry.calls),
      );
    }
    const calls = attempt.calls.map((id) => model.calls.get(id)).filter(Boolean);
    const tokens = calls.reduce((n, c) => n + (c.reused ? 0 : c.tokens || 0), 0);
    const reused = calls.filter((c) => c.reused).length;
    const took = attempt.endTs ? Date.parse(attempt.endTs) - Date.parse(attempt.startTs) : null;
    const meta = [
      took !== null && took >= 0 ? duration(took) : null,
      tokens ? `${compact(tokens)} tokens` : null,
      calls.length ? `${calls.length} call${calls.length === 1 ? "" : "s"}` : null,
      reused ? `${reused} from receipts` : null,
    ].filter(Boolean);
    setText(entry.toggle, attempt.title);
    fill(
      entry.head,
      entry.toggle,
      LOOP_STAGES.has(attempt.stage) && (attempt.round > 1 || (model.options?.max_research_loops || 1) > 1)
        ? h("span", { class: "tl-round", text: `round ${attempt.round}` })
        : null,
      h("span", {
        class: "tl-state",
        text: attempt.superseded ? "Replaced by a fork" : STATE_WORD[attempt.status],
      }),
      h("span", { class: "tl-meta", text: meta.join(" · ") }),
    );
    const description = NODE_BY_KEY.get(attempt.stage)?.description || "";
    const summary = attempt.summary || (attempt.status === "running" ? description : "");
    setText(entry.summary, summary);
    entry.summary.hidden = !summary;
    this.renderProblem(entry.problem, attempt, model, isLatestFailure);
    this.renderCalls(entry, calls);
    // blocks a fork replaced start folded; a person's own choice always wins
    const collapsed = this.collapsed.get(attempt.id) ?? attempt.superseded;
    entry.collapsed = collapsed;
    entry.toggle.setAttribute("aria-expanded", String(!collapsed));
    entry.calls.hidden = collapsed || calls.length === 0;
  }

  toggle(entry, id) {
    const collapsed = !entry.collapsed;
    this.collapsed.set(id, collapsed);
    entry.collapsed = collapsed;
    entry.toggle.setAttribute("aria-expanded", String(!collapsed));
    entry.calls.hidden = collapsed || entry.calls.childElementCount === 0;
  }

  renderProblem(box, attempt, model, isLatestFailure) {
    fill(box);
    box.hidden = true;
    box.removeAttribute("role");
    if (attempt.status === "failed" && attempt.error) {
      box.hidden = false;
      box.className = "tl-problem is-error";
      box.setAttribute("role", "alert");
      const said = plainError(attempt.error);
      box.append(
        h("p", { class: "tl-problem-text" }, h("strong", {}, "This stage failed. "), said.plain),
        ...(said.detail ? [said.detail] : []),
      );
      if (isLatestFailure && !isActive(model)) {
        box.append(this.resumeButtons());
      }
    } else if (attempt.status === "stopped") {
      box.hidden = false;
      box.className = "tl-problem is-paused";
      box.append(
        h(
          "p",
          { class: "tl-problem-text" },
          attempt.stopReason
            ? `Stopped: ${plainWords(attempt.stopReason)}. Raise the limit to continue.`
            : "Paused before this stage finished; it runs again when the research continues. Calls that already finished keep their results.",
        ),
      );
    }
  }

  /** The run's one "Continue" action (as in its header), with another checkpoint as the second choice. */
  resumeButtons() {
    return h(
      "div",
      { class: "tl-problem-actions" },
      h(
        "button",
        { type: "button", class: "btn btn-small btn-primary", on: { click: () => this.actions.onResume() } },
        "Continue",
      ),
      h(
        "button",
        {
          type: "button",
          class: "btn btn-small btn-quiet",
          on: { click: () => this.actions.onCheckpoints() },
        },
        "From another checkpoint…",
      ),
    );
  }

  renderCalls(entry, calls) {
    for (const call of calls) {
      let row = entry.rows.get(call.id);
      if (!row) {
        row = { el: h("li", { class: "call" }), rev: -1 };
        entry.rows.set(call.id, row);
        entry.calls.append(row.el);
      }
      this.callRows.set(call.id, { el: row.el, call });
      if (row.rev === call.rev) continue;
      row.rev = call.rev;
      this.renderCall(row.el, call);
    }
  }

  /** One sub-tool call row; its target opens what the call did (call-details.js). */
  renderCall(el, call) {
    const open = this.openCalls.has(call.id);
    const moreId = `call-more-${call.id}`;
    renderCall(el, call, {
      open,
      moreId,
      onToggle: () => {
        if (open) this.openCalls.delete(call.id);
        else this.openCalls.add(call.id);
        this.renderCall(el, call);
        /** @type {HTMLElement|null} */ (el.querySelector(".call-target"))?.focus();
      },
    });
    if (open) el.append(Object.assign(callDetails(call, this.files), { id: moreId }));
  }

  // --- segments, notes, errors, ends -------------------------------------------------------------------
  renderMarker(entry, item, model) {
    const el = entry.el;
    el.className = `tl-item tl-${item.kind}`;
    const time = h("time", { class: "tl-time", datetime: item.ts, text: clock(item.ts) });
    if (item.kind === "segment") {
      el.toggleAttribute("data-fork", item.fork);
      fill(
        el,
        h("span", { class: "tl-marker", "aria-hidden": "true" }),
        h(
          "div",
          { class: "tl-body" },
          h("p", { class: "tl-line" }, h("strong", {}, segmentTitle(item)), " ", time),
          segmentNote(item),
        ),
      );
    } else if (item.kind === "end") {
      el.dataset.status = item.status;
      fill(
        el,
        h("span", { class: "tl-marker", "aria-hidden": "true" }),
        h(
          "div",
          { class: "tl-body" },
          h("p", { class: "tl-line" }, h("strong", {}, endTitle(item)), " ", endNote(item), " ", time),
        ),
      );
    } else if (item.kind === "error") {
      fill(
        el,
        h("span", { class: "tl-marker", "aria-hidden": "true" }),
        h(
          "div",
          { class: "tl-body tl-problem is-error", role: "alert" },
          h("p", { class: "tl-problem-text" }, h("strong", {}, "The run failed. "), plainError(item.message).plain),
          plainError(item.message).detail,
          model.status === "failed" ? this.resumeButtons() : null,
        ),
      );
    } else {
      fill(
        el,
        h("span", { class: "tl-marker", "aria-hidden": "true" }),
        h("div", { class: "tl-body" }, h("p", { class: "tl-line muted" }, item.text, " ", time)),
      );
    }
  }

  renderUpcoming(model) {
    const next = upcoming(model);
    const key = next.map((n) => n.key).join(",") + model.status;
    if (this.upcomingKey === key) return;
    this.upcomingKey = key;
    this.upcoming.hidden = next.length === 0;
    fill(
      this.upcoming,
      h(
        "ul",
        { class: "tl-next", "aria-label": "Stages still to run" },
        next.map((node) =>
          h(
            "li",
            { class: "tl-next-item", "data-stage": node.key },
            h("span", { class: "tl-marker", "aria-hidden": "true" }),
            h("span", { class: "tl-next-title", text: node.title }),
            h("span", { class: "tl-next-desc muted", text: node.description }),
          ),
        ),
      ),
    );
  }
}

function segmentTitle(item) {
  const at = item.atStage ? NODE_BY_KEY.get(item.atStage)?.title : null;
  if (!item.resumed) return "Research started";
  if (item.fork) return at ? `Forked from the checkpoint after “${at}”` : "Forked from an earlier checkpoint";
  return at ? `Continued from the checkpoint after “${at}”` : "Continued research";
}

function segmentNote(item) {
  if (!item.fork) return null;
  return h(
    "p",
    { class: "tl-note muted" },
    "The stages after it run again on this branch; calls already made are answered from their receipts, not repeated.",
  );
}

function endTitle(item) {
  return (
    {
      completed: "Completed",
      cancelled: "Paused",
      failed: "Failed",
      interrupted: "Interrupted",
      waiting_for_input: "Waiting for you",
    }[
      item.status
    ] || item.status
  );
}

function endNote(item) {
  const at = item.atStage ? NODE_BY_KEY.get(item.atStage)?.title : null;
  if (item.status === "completed") return item.durationMs ? `in ${duration(item.durationMs)}.` : "";
  if (item.status === "cancelled") {
    const where = at ? `at the checkpoint after “${at}”.` : "at its latest checkpoint.";
    return item.error ? `${where} ${item.error}` : `${where} Nothing finished is lost.`;
  }
  if (item.status === "interrupted") return "The runner stopped; it continues when the runner starts again.";
  if (item.status === "waiting_for_input")
    return "to review the plan: nothing is searched, and no runner is held, until you answer.";
  if (item.status === "failed")
    return at ? `after “${at}”. The run can be resumed.` : "The run can be resumed.";
  return "";
}

/** One sub-tool call row; an LLM step that used its extractive method says why, under the row. */
function renderCall(el, call, { open, moreId, onToggle }) {
  el.dataset.kind = call.kind;
  el.dataset.status = call.status;
  el.toggleAttribute("data-fallback", Boolean(call.fallback));
  const target = call.kind === "fetch" ? call.target.replace(/^https?:\/\//, "") : call.target;
  fill(
    el,
    h("span", { class: "call-kind", text: KIND_WORD[call.kind] || call.kind }),
    h(
      "button",
      {
        type: "button",
        class: "call-target",
        title: call.target,
        "aria-expanded": String(open),
        "aria-controls": moreId,
        on: { click: onToggle },
      },
      target,
    ),
    h("span", { class: "call-detail", text: callDetail(call) }),
    h("span", {
      class: "call-status",
      text: callStatus(call),
      title: call.reused ? "Answered from a receipt: not called again" : null,
    }),
    call.fallback
      ? h(
          "p",
          { class: "call-fallback" },
          h("strong", {}, `${call.fallback.step}: the model's answer was unusable`),
          `, so this step used its extractive method. Why: ${call.fallback.reason}`,
        )
      : null,
  );
}

function callStatus(call) {
  if (call.status === "running") return "…";
  if (call.status === "reused") return "reused";
  if (call.status === "failed") return "failed";
  // an LLM step whose value came from its extractive method is not a plain "ok" (the detail says so too)
  return call.fallback ? "fell back" : "ok";
}

function callDetail(call) {
  if (call.status === "running") {
    return (
      { search: "searching", fetch: "fetching", llm: "thinking", write: "writing" }[call.kind] || "running"
    );
  }
  if (call.status === "failed") {
    return shortError(
      call.kind === "fetch" ? fetchProblem(call.target, call.error, call.reason) : call.error || "failed",
    );
  }
  const parts = [];
  if (call.kind === "search") {
    parts.push(`${call.results ?? 0} result${call.results === 1 ? "" : "s"}`);
    // a source that failed beside one that answered (the web unreachable, the documents read): said on the
    // line, not only in its details, or "3 results" reads as if the web had been searched
    const failed = Object.keys(call.failures || {});
    if (failed.length) parts.push(`${failed.join(", ")} failed`);
  }
  if (call.kind === "fetch" || call.kind === "write") parts.push(bytes(call.bytes));
  if (call.kind === "llm") parts.push(`${compact(call.tokens)} tokens${call.reused ? " saved" : ""}`);
  if (call.fallback) parts.push("extractive instead");
  if (!call.reused && call.durationMs !== undefined) parts.push(duration(call.durationMs));
  return parts.filter(Boolean).join(" · ");
}

function shortError(text) {
  const line = String(text).split("\n")[0];
  return line.length > 90 ? `${line.slice(0, 87)}…` : line;
}
