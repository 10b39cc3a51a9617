// Checkpoints and resume: the run's checkpoint index, a preview of what continuing from one would skip,
// run again and reuse (and whether any call might be repeated), and the technical IDs — which stay here,
// out of the main narrative.

import { api } from "../core/api.js";
import { clock, fill, h, plainWords } from "../core/dom.js";
import { NODE_BY_KEY } from "../core/nodes.js";
import { isActive } from "./model/selectors.js";
import { wholeNumberBounds } from "../form/form.js";
import { numberProblem, showFieldProblem } from "../core/validate.js";

const stageTitle = (key) => NODE_BY_KEY.get(key)?.short || key;
const STOPPED = new Set(["cancelled", "interrupted", "failed"]);
const BUDGET_FIELDS = [
  ["max_llm_tokens", "LLM tokens"],
  ["max_search_calls", "Searches"],
  ["max_fetches", "Fetches"],
  ["deadline_seconds", "Deadline (s)"],
];

export class ResumeView {
  /**
   * @param {HTMLElement} box
   * @param {Record<string, any>} limits the server's option bounds (config.json), for the budget fields
   * @param {{onContinue: (checkpointId: string|null, options?: object) => Promise<void>,
   *   onForkWithChanges?: (runId: string, checkpoint: any, opener: HTMLElement) => void}} actions
   */
  constructor(box, limits, actions) {
    this.box = box;
    this.limits = limits;
    this.actions = actions;
    this.reset();
  }

  reset() {
    this.runId = null;
    this.checkpoints = [];
    this.selected = null;
    this.preview = null;
    this.detail = null;
    this.loadedKey = "";
    fill(this.box, h("p", { class: "empty muted" }, "Loading checkpoints…"));
  }

  /**
   * (Re)load the index when the run moved on since the last look.
   * @param {any} detail run detail (GET /api/runs/{id})
   * @param {ReturnType<import("./model/events.js").createModel>} model
   */
  async load(detail, model) {
    const key = `${detail.run_id}|${model.checkpoints.length}|${model.status}`;
    if (key === this.loadedKey) return;
    this.loadedKey = key;
    this.runId = detail.run_id;
    this.detail = detail;
    this.model = model;
    try {
      const data = await api.checkpoints(detail.run_id);
      this.checkpoints = data.checkpoints;
    } catch (error) {
      this.loadedKey = "";
      fill(this.box, h("p", { class: "form-error" }, `Could not load the checkpoints: ${error.message}`));
      return;
    }
    if (this.selected && !this.checkpoints.some((c) => c.checkpoint_id === this.selected))
      this.selected = null;
    this.preview = null;
    this.render();
    if (this.selected) await this.select(this.selected);
  }

  render() {
    const active = isActive(this.model);
    const intro = h(
      "p",
      { class: "resume-intro" },
      "Every stage ends in a durable checkpoint. Continue from the latest one, or pick an earlier one to fork: " +
        "the stages after it run again, and every call already made is answered from its receipt instead of being repeated.",
    );
    if (!this.checkpoints.length) {
      fill(
        this.box,
        intro,
        h(
          "p",
          { class: "empty muted" },
          "No checkpoint yet: the first one is written when planning finishes.",
        ),
        this.technicalBox(),
      );
      return;
    }
    const list = h(
      "fieldset",
      { class: "cp-list" },
      h("legend", {}, "Checkpoints"),
      this.checkpoints.map((cp, index) => this.option(cp, index === this.checkpoints.length - 1)),
    );
    this.previewBox = h("section", { class: "cp-preview", "aria-live": "polite", "aria-label": "Preview" });
    const budget = active ? null : this.budgetBox();
    this.renderPreview(active);
    fill(
      this.box,
      intro,
      active
        ? h("p", { class: "notice" }, "The run is running. Pause it first to continue from a checkpoint.")
        : null,
      STOPPED.has(this.model.status) ? this.latestCard(budget) : null,
      h("div", { class: "cp-layout" }, list, this.previewBox),
      STOPPED.has(this.model.status) ? null : budget,
      this.technicalBox(),
    );
  }

  /** A stopped run: continuing from where it stopped is the usual move (no fork, nothing runs twice). */
  latestCard(budget) {
    const button = h(
      "button",
      { type: "button", class: "btn btn-primary", id: "cp-continue-latest" },
      "Continue",
    );
    button.addEventListener("click", async () => {
      if (this.invalidBudget()) return; // nothing starts with a value the server refuses
      button.disabled = true;
      try {
        await this.actions.onContinue(null, this.budgetChange());
      } finally {
        button.disabled = false;
      }
    });
    return h(
      "section",
      { class: "cp-latest", "aria-labelledby": "cp-latest-title" },
      h("h2", { id: "cp-latest-title", class: "cp-preview-title" }, "Where it stopped"),
      h(
        "p",
        { class: "muted" },
        "From the latest checkpoint: finished calls are answered from their receipts, nothing is paid for twice.",
      ),
      budget,
      h("div", { class: "cp-actions" }, button),
    );
  }

  option(cp, isLast) {
    const id = `cp-${cp.checkpoint_id}`;
    const input = h("input", {
      type: "radio",
      name: "checkpoint",
      id,
      value: cp.checkpoint_id,
      checked: this.selected === cp.checkpoint_id,
      on: { change: () => this.select(cp.checkpoint_id) },
    });
    const created = new Date(cp.created_at);
    const sameDay = created.toDateString() === new Date().toDateString();
    return h(
      "div",
      { class: "cp" },
      input,
      h(
        "label",
        { for: id },
        h(
          "span",
          { class: "cp-top" },
          h("span", { class: "cp-title", text: `After “${cp.title}”` }),
          cp.fork_of ? h("span", { class: "tag is-fork" }, "first of a fork") : null,
          isLast ? h("span", { class: "tag" }, "newest") : null,
          h(
            "time",
            { class: "cp-time muted", datetime: cp.created_at },
            sameDay ? clock(cp.created_at) : created.toLocaleString(),
          ),
        ),
        cp.summary ? h("span", { class: "cp-summary muted", text: cp.summary }) : null,
      ),
    );
  }

  async select(checkpointId) {
    this.selected = checkpointId;
    this.preview = null;
    if (this.technicalEl) fill(this.technicalEl, ...this.technical());
    this.renderPreview(isActive(this.model), true);
    try {
      const preview = await api.preview(this.runId, checkpointId);
      if (this.selected !== checkpointId) return;
      this.preview = preview;
    } catch (error) {
      this.preview = { error: error.message };
    }
    this.renderPreview(isActive(this.model));
  }

  renderPreview(active, loading = false) {
    const box = this.previewBox;
    if (!box) return;
    if (!this.selected) {
      fill(
        box,
        h("p", { class: "empty muted" }, "Pick a checkpoint to see what continuing from it would do."),
      );
      return;
    }
    if (loading || !this.preview) {
      fill(box, h("p", { class: "muted" }, "Working out what would run…"));
      return;
    }
    const p = this.preview;
    if (p.error) {
      fill(box, h("p", { class: "form-error" }, `Could not preview this checkpoint: ${p.error}`));
      return;
    }
    const cp = this.checkpoints.find((c) => c.checkpoint_id === this.selected);
    const resumable = !active && cp?.resumable !== false;
    const risk = p.duplicate_risk || { level: "none", explanation: "" };
    const button = h(
      "button",
      { type: "button", class: "btn btn-primary", id: "cp-continue", disabled: active || !resumable },
      p.fork ? "Fork from this checkpoint" : "Continue",
    );
    button.addEventListener("click", async () => {
      if (this.invalidBudget()) return;
      button.disabled = true;
      button.textContent = "Starting…";
      try {
        await this.actions.onContinue(this.selected, this.budgetChange());
      } finally {
        button.textContent = p.fork ? "Fork from this checkpoint" : "Continue";
      }
    });
    fill(
      box,
      h(
        "h2",
        { class: "cp-preview-title" },
        p.fork
          ? "A fork: the run goes back to this point"
          : "The latest checkpoint: the run simply continues",
      ),
      h(
        "dl",
        { class: "cp-facts" },
        fact("Already done", p.skipped_stages.map(stageTitle).join(" · ") || "nothing"),
        fact(
          "Will run",
          (p.stages_to_run.map(stageTitle).join(" · ") || "only the final check") +
            (p.may_loop_back_to_search ? " (may loop back to search)" : ""),
        ),
        fact(
          "Receipts reused",
          p.receipts_reused_count
            ? `${p.receipts_reused_count} finished call${p.receipts_reused_count === 1 ? "" : "s"} answered from receipts, not made or paid for again`
            : "none needed",
        ),
        fact(
          "Duplicate risk",
          h(
            "span",
            { class: `risk risk-${risk.level}` },
            risk.level === "none" ? "None. " : "Possible. ",
            risk.explanation,
          ),
        ),
      ),
      risk.calls_in_doubt?.length
        ? h(
            "ul",
            { class: "cp-doubt" },
            risk.calls_in_doubt.map((c) => h("li", {}, `${c.tool_name} (${c.stage})`)),
          )
        : null,
      h(
        "div",
        { class: "cp-actions" },
        button,
        this.forkButton(cp, active),
        active ? h("span", { class: "muted" }, "Pause the run first.") : null,
      ),
    );
  }

  /** A NEW run from this checkpoint with changes (fork-dialog.js); this run stays as it is. */
  forkButton(cp, active) {
    if (!cp || !this.actions.onForkWithChanges) return null;
    const button = h(
      "button",
      { type: "button", class: "btn", id: "cp-fork-changes", disabled: active },
      "Continue from here with changes…",
    );
    button.addEventListener("click", () => this.actions.onForkWithChanges(this.runId, cp, button));
    return button;
  }

  /** Limits for the rest of the run (open when a limit stopped it): a run resumes with what it had. */
  budgetBox() {
    const budget = this.model.options?.budget || {};
    this.budgetInputs = new Map();
    const fields = BUDGET_FIELDS.map(([name, label]) => {
      const input = h("input", {
        id: `cp-budget-${name}`,
        type: "number",
        ...wholeNumberBounds(this.limits[name]),
        placeholder: "no limit",
        value: budget[name] ?? "",
      });
      this.budgetInputs.set(name, input);
      // checked as typed against the server's bounds: never changed to fit
      input.addEventListener("input", () => this.budgetProblem(name, input, label));
      return h("div", { class: "field" }, h("label", { for: input.id }, label), input);
    });
    return h(
      "details",
      { class: "cp-budget", open: Boolean(this.model.budgetStop) },
      h("summary", {}, "Budget limits for the rest of the run"),
      this.model.budgetStop ? h("p", { class: "notice" }, `${plainWords(this.model.budgetStop)}.`) : null,
      h("div", { class: "option-grid" }, fields),
    );
  }

  budgetProblem(name, input, label) {
    const problem = numberProblem(input.value, this.limits[name], { label, optional: true });
    showFieldProblem(input, problem);
    return problem;
  }

  /** The first budget field out of the server's bounds (shown under it), or null. */
  invalidBudget() {
    for (const [name, input] of this.budgetInputs || []) {
      const label = BUDGET_FIELDS.find(([n]) => n === name)?.[1] || name;
      if (this.budgetProblem(name, input, label)) {
        input.closest("details")?.setAttribute("open", "");
        input.focus();
        return input;
      }
    }
    return null;
  }

  /** The budget as edited, or undefined when nothing changed. Empty = no limit. */
  budgetChange() {
    const budget = this.model.options?.budget || {};
    const edited = {};
    let changed = false;
    for (const [name, input] of this.budgetInputs || []) {
      const value = input.value.trim() === "" ? null : Number(input.value);
      edited[name] = value;
      if (value !== (budget[name] ?? null)) changed = true;
    }
    return changed ? { budget: edited } : undefined;
  }

  /** The IDs, folded away: a <details> kept across renders so it stays open once opened. */
  technicalBox() {
    this.technicalEl ??= h("details", { class: "cp-technical" });
    return fill(this.technicalEl, ...this.technical());
  }

  technical() {
    const d = this.detail || {};
    const cp = this.checkpoints.find((c) => c.checkpoint_id === this.selected);
    const ref = cp?.framework_ref?.langgraph;
    return [
      h("summary", {}, "Technical details"),
      h(
        "dl",
        { class: "ids" },
        fact("Run", h("code", {}, d.run_id || "")),
        fact("Thread", h("code", {}, d.thread_id || "")),
        d.artifact_dir ? fact("Files", h("code", {}, d.artifact_dir)) : null,
        cp ? fact("Checkpoint", h("code", {}, cp.checkpoint_id)) : null,
        ref
          ? fact(
              "LangGraph",
              h("code", {}, `${ref.thread_id} / ${ref.checkpoint_ns || "∅"} / ${ref.checkpoint_id}`),
            )
          : null,
        cp?.fork_of ? fact("Forked from", h("code", {}, cp.fork_of)) : null,
      ),
    ];
  }
}

function fact(term, value) {
  return h("div", { class: "fact" }, h("dt", {}, term), h("dd", {}, value));
}
