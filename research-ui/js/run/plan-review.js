// Plan review: a run waiting for you (status `waiting_for_input`) shows its plan — sub-questions, queries
// and the report's outline — as editable lists. Approve it, save your edits and continue, or reject it with
// a reason (docs/steering.md). The server checks an edited plan; what it refuses is shown at the field.

import { api } from "../core/api.js";
import { fill, h, setText } from "../core/dom.js";

/** The two lists a person edits, with the words the editor uses for them. */
const LISTS = [
  {
    key: "sub_questions",
    title: "Sub-questions",
    one: "sub-question",
    note: "Each becomes a section of the report.",
  },
  { key: "queries", title: "Queries", one: "query", note: "Searched first, in this order." },
];

/**
 * @typedef {{sub_questions: string[], queries: string[], rationale?: string, outline: string[]}} Plan
 * @typedef {{kind: string, plan: Plan, since: string}} PendingInput
 */

export class PlanReview {
  /**
   * @param {HTMLElement} box
   * @param {{onAnswered: (runId: string, detail: any) => void}} hooks
   */
  constructor(box, hooks) {
    this.box = box;
    this.hooks = hooks;
    this.key = "";
    this.runId = null;
    /** @type {Plan|null} */
    this.plan = null;
    /** @type {{sub_questions: string[], queries: string[]}} */
    this.draft = { sub_questions: [], queries: [] };
    this.busy = false;
    this.rejecting = false;
  }

  /**
   * Called on every render of the run page: shows the editor while the run waits, hides it otherwise.
   * The draft is kept across renders: it is reset only when another wait begins.
   * @param {string} runId @param {string} status @param {PendingInput|null} pending
   */
  update(runId, status, pending) {
    if (status !== "waiting_for_input" || !pending || pending.kind !== "plan_review") {
      this.hide();
      return;
    }
    const key = `${runId}|${pending.since}`;
    if (key === this.key) return;
    this.key = key;
    this.runId = runId;
    this.plan = pending.plan;
    this.draft = { sub_questions: [...pending.plan.sub_questions], queries: [...pending.plan.queries] };
    this.rejecting = false;
    this.busy = false;
    this.box.hidden = false;
    this.render();
  }

  hide() {
    if (!this.key && this.box.hidden) return;
    this.key = "";
    this.runId = null;
    this.box.hidden = true;
    this.box.replaceChildren();
  }

  edited() {
    const plan = this.plan;
    if (!plan) return false;
    return LISTS.some(({ key }) => JSON.stringify(this.draft[key]) !== JSON.stringify(plan[key]));
  }

  render({ focus = null } = {}) {
    const plan = this.plan;
    if (!plan) return;
    const edited = this.edited();
    this.problem = h("p", { class: "form-error", id: "plan-problem", role: "alert", hidden: true });
    fill(
      this.box,
      h("h2", { id: "plan-review-title", class: "plan-title" }, "Review the plan"),
      h(
        "p",
        { class: "muted plan-intro" },
        "Nothing has been searched yet. Change the sub-questions and queries as you like — add, remove, " +
          "reorder or reword them — then continue, or reject the plan.",
      ),
      plan.rationale
        ? h("p", { class: "plan-rationale" }, h("strong", {}, "Why this plan: "), plan.rationale)
        : null,
      h(
        "div",
        { class: "plan-lists" },
        h("div", { class: "plan-edit" }, LISTS.map((list) => this.listEditor(list))),
        this.outline(),
      ),
      this.problem,
      this.actions(edited),
    );
    if (focus) this.box.querySelector(focus)?.focus();
  }

  /** One editable list: a text field per item with move up, move down and remove; a field to add one. */
  listEditor({ key, title, one, note }) {
    const items = this.draft[key];
    const addField = /** @type {HTMLInputElement} */ (
      h("input", {
        type: "text",
        id: `plan-add-${key}`,
        maxlength: "300",
        "aria-describedby": `plan-${key}-error`,
      })
    );
    const add = () => {
      const text = addField.value.trim();
      if (!text) {
        addField.focus();
        return;
      }
      this.draft[key] = [...items, text];
      this.render({ focus: `#plan-add-${key}` });
    };
    addField.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        add();
      }
    });
    const rows = items.map((text, i) => {
      const label = `${capital(one)} ${i + 1}`;
      const input = h("input", {
        type: "text",
        id: `plan-${key}-${i}`,
        value: text,
        maxlength: "300",
        "aria-label": label,
        "aria-describedby": `plan-${key}-${i}-error`,
        on: {
          input: (event) => {
            this.draft[key][i] = event.target.value;
            this.refreshActions();
            if (key === "sub_questions") this.box.querySelector(".plan-outline")?.replaceWith(this.outline());
          },
        },
      });
      const move = (to) => {
        const next = [...this.draft[key]];
        [next[i], next[to]] = [next[to], next[i]];
        this.draft[key] = next;
        this.render({ focus: `#plan-${key}-${to}` });
      };
      return h(
        "li",
        { class: "plan-item" },
        h("div", { class: "plan-row" }, input, this.itemButtons(key, i, items.length, label, move)),
        h("p", { class: "field-error", id: `plan-${key}-${i}-error`, hidden: true }),
      );
    });
    return h(
      "fieldset",
      { class: "plan-list", "data-list": key },
      h("legend", {}, `${title} `, h("span", { class: "muted" }, `(${items.length}) ${note}`)),
      h("ol", {}, rows),
      h(
        "div",
        { class: "plan-add" },
        h("label", { for: `plan-add-${key}` }, `Add a ${one}`),
        h(
          "div",
          { class: "plan-row" },
          addField,
          h("button", { type: "button", class: "btn btn-small", on: { click: add } }, "Add"),
        ),
      ),
      h("p", { class: "field-error", id: `plan-${key}-error`, hidden: true }),
    );
  }

  itemButtons(key, i, length, label, move) {
    const remove = () => {
      this.draft[key] = this.draft[key].filter((_, j) => j !== i);
      const next = Math.min(i, this.draft[key].length - 1);
      this.render({ focus: next >= 0 ? `#plan-${key}-${next}` : `#plan-add-${key}` });
    };
    const small = (text, aria, click, disabled = false) =>
      h(
        "button",
        { type: "button", class: "link-btn", "aria-label": `${aria} ${label}`, disabled, on: { click } },
        text,
      );
    return h(
      "span",
      { class: "plan-item-actions" },
      small("↑", "Move up", () => move(i - 1), i === 0),
      small("↓", "Move down", () => move(i + 1), i === length - 1),
      small("Remove", "Remove", remove),
    );
  }

  /** The report the plan leads to: its fixed sections and one findings section per sub-question. */
  outline() {
    const fixed = this.plan.outline;
    const first = fixed.findIndex((s) => s.startsWith("Findings: "));
    const before = first < 0 ? fixed.slice(0, 1) : fixed.slice(0, first);
    const after = fixed.filter((s, i) => i >= before.length && !s.startsWith("Findings: "));
    const sections = [...before, ...this.draft.sub_questions.map((q) => `Findings: ${q}`), ...after];
    return h(
      "section",
      { class: "plan-outline", "aria-labelledby": "plan-outline-title" },
      h("h3", { id: "plan-outline-title" }, "The report's outline"),
      h("ol", { id: "plan-outline" }, sections.map((s) => h("li", {}, s))),
    );
  }

  actions(edited) {
    if (this.rejecting) return this.rejectBox();
    const busy = this.busy;
    const hint = edited
      ? "You changed the plan: save your edits to search them, or undo them to approve the plan as it was."
      : "";
    return h(
      "div",
      { class: "plan-actions" },
      button("plan-save", "btn btn-primary", "Save edits & continue", !edited || busy, () =>
        this.send({ action: "edit", plan: this.editedPlan() }),
      ),
      button("plan-approve", edited ? "btn" : "btn btn-primary", "Approve", edited || busy, () =>
        this.send({ action: "approve" }),
      ),
      edited ? button("plan-undo", "link-btn", "Undo my changes", false, () => this.undo()) : null,
      button("plan-reject", "btn btn-quiet is-danger", "Reject…", busy, () => this.startReject()),
      h("p", { class: "muted plan-hint", id: "plan-hint" }, hint),
    );
  }

  /** Typing changes only the buttons (the field keeps its focus and caret; a reason being typed stays). */
  refreshActions() {
    const old = this.box.querySelector(".plan-actions");
    if (old && !this.rejecting) old.replaceWith(this.actions(this.edited()));
  }

  undo() {
    this.draft = { sub_questions: [...this.plan.sub_questions], queries: [...this.plan.queries] };
    this.render({ focus: "#plan-approve" });
  }

  startReject() {
    this.rejecting = true;
    this.render({ focus: "#plan-reason" });
  }

  rejectBox() {
    const reason = /** @type {HTMLTextAreaElement} */ (
      h("textarea", { id: "plan-reason", rows: "2", maxlength: "500" })
    );
    const keep = () => {
      this.rejecting = false;
      this.render({ focus: "#plan-reject" });
    };
    return h(
      "div",
      { class: "plan-actions plan-reject" },
      h(
        "label",
        { for: "plan-reason" },
        "Why reject it? ",
        h("span", { class: "muted" }, "(kept as the run's reason; the run ends)"),
      ),
      reason,
      h(
        "div",
        { class: "plan-row" },
        button("plan-reject-confirm", "btn btn-danger", "Reject the plan", this.busy, () =>
          this.send({ action: "reject", reason: reason.value.trim() || null }),
        ),
        button("plan-keep", "link-btn", "Keep reviewing", false, keep),
      ),
    );
  }

  /** The whole edited lists, as the API takes them (each item trimmed; the server checks the rest). */
  editedPlan() {
    return {
      sub_questions: this.draft.sub_questions.map((s) => s.trim()),
      queries: this.draft.queries.map((s) => s.trim()),
    };
  }

  async send(answer) {
    const runId = this.runId;
    this.busy = true;
    this.clearProblems();
    for (const button of this.box.querySelectorAll(".plan-actions button")) button.disabled = true;
    try {
      const detail = await api.answerInput(runId, answer);
      if (runId !== this.runId) return;
      this.busy = false;
      this.hide();
      this.hooks.onAnswered(runId, detail);
    } catch (error) {
      if (runId !== this.runId) return;
      this.busy = false;
      this.render();
      this.showProblems(error);
    }
  }

  clearProblems() {
    for (const p of this.box.querySelectorAll(".field-error")) p.hidden = true;
    for (const input of this.box.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
    if (this.problem) this.problem.hidden = true;
  }

  /** A 422 names the field (plan.queries, plan.queries.2, …): the message goes under it. */
  showProblems(error) {
    const unplaced = [];
    for (const e of error.errors || []) {
      const loc = (e.loc || []).filter((p) => p !== "body");
      const [top, list, index] = loc;
      const key = top === "plan" && (list === "queries" || list === "sub_questions") ? list : null;
      const target = key
        ? this.box.querySelector(typeof index === "number" ? `#plan-${key}-${index}-error` : `#plan-${key}-error`)
        : null;
      if (!target) {
        unplaced.push(e.msg);
        continue;
      }
      setText(target, plainMessage(e.msg));
      target.hidden = false;
      const input = typeof index === "number" ? this.box.querySelector(`#plan-${key}-${index}`) : null;
      input?.setAttribute("aria-invalid", "true");
    }
    const placed = (error.errors || []).length > unplaced.length;
    setText(
      this.problem,
      placed
        ? `The server did not take the edited plan: ${unplaced.length ? unplaced.join("; ") : "see the marked fields"}.`
        : `Could not answer: ${error.message}`,
    );
    this.problem.hidden = false;
    this.box.querySelector('[aria-invalid="true"]')?.focus();
  }
}

function button(id, cls, label, disabled, click) {
  return h("button", { type: "button", class: cls, id, disabled, on: { click } }, label);
}

function capital(word) {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** pydantic's "Value error, …" prefix is not for people. */
function plainMessage(msg) {
  return String(msg).replace(/^Value error, /, "");
}
