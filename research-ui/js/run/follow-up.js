// "Ask a follow-up" under a completed report: a new run for a new question that starts with this run's
// sources and evidence, searches only for what they do not cover and reuses this run's recorded calls
// (POST /api/runs/{id}/follow-up, docs/steering.md). The new run opens when it is created.

import { api } from "../core/api.js";
import { fill, h, setText } from "../core/dom.js";

export class FollowUpBox {
  /**
   * @param {HTMLElement} box
   * @param {{onStarted: (run: any) => void}} hooks
   */
  constructor(box, hooks) {
    this.box = box;
    this.hooks = hooks;
    this.runId = null;
  }

  /** Shown under the report of a completed run only; the typed question survives re-renders. */
  update(runId, status) {
    const show = status === "completed";
    if (!show) {
      this.runId = null;
      this.box.hidden = true;
      return;
    }
    if (this.runId === runId) return;
    this.runId = runId;
    this.box.hidden = false;
    this.render();
  }

  render() {
    const question = /** @type {HTMLTextAreaElement} */ (
      h("textarea", {
        id: "follow-up-question",
        rows: "2",
        "aria-describedby": "follow-up-note follow-up-error",
      })
    );
    const problem = h("p", { class: "form-error", id: "follow-up-error", role: "alert", hidden: true });
    const button = /** @type {HTMLButtonElement} */ (
      h("button", { type: "submit", class: "btn btn-primary", id: "follow-up-start" }, "Ask the follow-up")
    );
    const form = h(
      "form",
      { class: "follow-up-form", novalidate: true },
      h("label", { for: "follow-up-question" }, "Your follow-up question"),
      question,
      h(
        "p",
        { class: "muted", id: "follow-up-note" },
        "A new run: it starts with this report's sources, searches only for what they do not cover, and " +
          "reuses this run's recorded calls. This run stays as it is.",
      ),
      problem,
      h("div", { class: "plan-row" }, button),
    );
    question.addEventListener("input", () => {
      if (question.value.trim()) problem.hidden = true; // the request is met: the old error goes
    });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const runId = this.runId;
      const text = question.value.trim();
      if (!text) {
        setText(problem, "Type the follow-up question first.");
        problem.hidden = false;
        question.focus();
        return;
      }
      problem.hidden = true;
      button.disabled = true;
      setText(button, "Starting…");
      try {
        const run = await api.followUp(runId, text);
        if (runId === this.runId) this.hooks.onStarted(run);
      } catch (error) {
        setText(problem, `Could not start the follow-up: ${error.message}`);
        problem.hidden = false;
        question.focus();
      } finally {
        button.disabled = false;
        setText(button, "Ask the follow-up");
      }
    });
    fill(this.box, h("h2", { id: "follow-up-title", class: "plan-title" }, "Ask a follow-up"), form);
  }
}
