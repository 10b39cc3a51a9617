// "Continue from here with changes": a dialog that forks a checkpoint into a NEW run with a state patch —
// queries added or dropped, sources left out, the critic review switched — after showing the server's
// preview of what is kept, what runs again and how many recorded calls are reusable (docs/steering.md).
// The original run is not touched; the fork opens when it is created.

import { api } from "../core/api.js";
import { fill, h, plural, setText } from "../core/dom.js";
import { NODE_BY_KEY } from "../core/nodes.js";

const stageTitle = (key) => NODE_BY_KEY.get(key)?.short || key;
const lines = (text) =>
  text
    .split("\n")
    .map((s) => s.trim())
    .filter(Boolean);

export class ForkDialog {
  /** @param {{onForked: (run: any) => void}} hooks */
  constructor(hooks) {
    this.hooks = hooks;
    this.dialog = /** @type {HTMLDialogElement} */ (
      h("dialog", { class: "fork-dialog", id: "fork-dialog", "aria-labelledby": "fork-title" })
    );
    document.body.append(this.dialog);
    this.dialog.addEventListener("close", () => this.opener?.focus());
  }

  /**
   * @param {string} runId
   * @param {{checkpoint_id: string, stage: string}} checkpoint
   * @param {HTMLElement} opener focused again when the dialog closes
   */
  async open(runId, checkpoint, opener) {
    this.runId = runId;
    this.checkpoint = checkpoint;
    this.opener = opener;
    this.queries = await this.knownQueries(runId);
    this.render();
    this.dialog.showModal();
    this.dialog.querySelector("#fork-add")?.focus();
  }

  /** The run's planned queries, to choose from when dropping some (none if it has no plan yet). */
  async knownQueries(runId) {
    try {
      const plan = await api.artifactJson(runId, "plan.json");
      return Array.isArray(plan?.queries) ? plan.queries.map(String) : [];
    } catch {
      return []; // no plan written yet: nothing to drop
    }
  }

  render() {
    const stage = NODE_BY_KEY.get(this.checkpoint.stage)?.title || this.checkpoint.stage;
    this.add = /** @type {HTMLTextAreaElement} */ (
      h("textarea", { id: "fork-add", rows: "3", "aria-describedby": "fork-add-note fork-add_queries-error" })
    );
    this.drops = this.queries.map((q, i) =>
      h("input", { type: "checkbox", id: `fork-drop-${i}`, value: q, on: { change: () => this.stale() } }),
    );
    this.sources = /** @type {HTMLTextAreaElement} */ (
      h("textarea", { id: "fork-sources", rows: "2", "aria-describedby": "fork-drop_sources-error" })
    );
    this.critic = /** @type {HTMLSelectElement} */ (
      h(
        "select",
        { id: "fork-critic", on: { change: () => this.stale() } },
        h("option", { value: "" }, "as it was"),
        h("option", { value: "on" }, "on"),
        h("option", { value: "off" }, "off"),
      )
    );
    for (const area of [this.add, this.sources]) area.addEventListener("input", () => this.stale());
    this.previewBox = h("section", {
      class: "fork-preview",
      "aria-live": "polite",
      "aria-label": "What the fork would do",
    });
    this.problem = h("p", { class: "form-error", id: "fork-problem", role: "alert", hidden: true });
    this.createButton = /** @type {HTMLButtonElement} */ (
      h("button", { type: "submit", class: "btn btn-primary", id: "fork-create" }, "Create the fork")
    );
    const form = h(
      "form",
      { class: "fork-form", method: "dialog", novalidate: true },
      h("h2", { id: "fork-title", class: "plan-title" }, "Continue from here with changes"),
      h(
        "p",
        { class: "muted" },
        `A new run starts from the checkpoint after “${stage}” with your changes; this run stays as it is. ` +
          "Calls whose arguments did not change are answered from this run's receipts.",
      ),
      field("fork-add", "Add queries", "one per line; searched too", this.add, "add_queries"),
      this.queries.length
        ? h(
            "fieldset",
            { class: "fork-drops" },
            h("legend", {}, "Drop queries ", h("span", { class: "muted" }, "(with what only they found)")),
            this.drops.map((box, i) =>
              h("div", { class: "check" }, box, h("label", { for: box.id }, this.queries[i])),
            ),
            h("p", { class: "field-error", id: "fork-drop_queries-error", hidden: true }),
          )
        : null,
      field("fork-sources", "Leave out sources", "their URLs, one per line", this.sources, "drop_sources"),
      h(
        "div",
        { class: "field" },
        // the stage's name as the server says it (config.json)
        h("label", { for: "fork-critic" }, NODE_BY_KEY.get("critic_review")?.title || "critic_review"),
        this.critic,
      ),
      this.previewBox,
      this.problem,
      h(
        "div",
        { class: "plan-row fork-buttons" },
        this.createButton,
        h(
          "button",
          { type: "button", class: "btn", id: "fork-preview-btn", on: { click: () => this.preview() } },
          "Show what it would do",
        ),
        h(
          "button",
          { type: "button", class: "link-btn", on: { click: () => this.dialog.close() } },
          "Cancel",
        ),
      ),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.create();
    });
    fill(this.dialog, form);
    fill(
      this.previewBox,
      h("p", { class: "muted" }, "Change something, then see what the fork would keep and run."),
    );
  }

  /** The patch as the API takes it: only what was changed. */
  patch() {
    const patch = {};
    const add = lines(this.add.value);
    if (add.length) patch.add_queries = add;
    const drop = this.drops.filter((b) => b.checked).map((b) => b.value);
    if (drop.length) patch.drop_queries = drop;
    const sources = lines(this.sources.value);
    if (sources.length) patch.drop_sources = sources;
    if (this.critic.value) patch.options = { requires_critic_review: this.critic.value === "on" };
    return patch;
  }

  /** An edit makes the preview out of date: say so rather than show numbers for another patch. */
  stale() {
    if (this.previewBox.dataset.shown) {
      delete this.previewBox.dataset.shown;
      fill(this.previewBox, h("p", { class: "muted" }, "Changed: show what it would do again."));
    }
  }

  clearProblems() {
    this.problem.hidden = true;
    for (const p of this.dialog.querySelectorAll(".field-error")) p.hidden = true;
  }

  async preview() {
    this.clearProblems();
    fill(this.previewBox, h("p", { class: "muted" }, "Working out what the fork would do…"));
    try {
      const p = await api.forkPreview(this.runId, this.checkpoint.checkpoint_id, this.patch());
      this.previewBox.dataset.shown = "1";
      fill(
        this.previewBox,
        h(
          "dl",
          { class: "cp-facts" },
          fact("Kept", `everything through “${stageTitle(p.kept_through)}”`),
          fact("Runs again", p.stages_to_run.map(stageTitle).join(" · ") || "only the final check"),
          fact("Changes", p.changes.length ? p.changes.join("; ") : "none: the fork runs on as this run did"),
          fact(
            "Reusable calls",
            p.receipts_reusable
              ? `${plural(p.receipts_reusable, "recorded call")} answered from receipts when made again unchanged`
              : "none",
          ),
        ),
      );
    } catch (error) {
      fill(this.previewBox);
      this.showProblems(error);
    }
  }

  async create() {
    this.clearProblems();
    const button = this.createButton;
    button.disabled = true;
    setText(button, "Creating…");
    try {
      const run = await api.fork(this.runId, this.checkpoint.checkpoint_id, this.patch());
      this.opener = null; // the fork opens: focus goes to its page
      this.dialog.close();
      this.hooks.onForked(run);
    } catch (error) {
      this.showProblems(error);
    } finally {
      button.disabled = false;
      setText(button, "Create the fork");
    }
  }

  /** A 422 names the patch's field (patch.add_queries, …): the message goes under it. */
  showProblems(error) {
    const unplaced = [];
    for (const e of error.errors || []) {
      const loc = (e.loc || []).filter((p) => p !== "body");
      const name = loc[0] === "patch" ? loc[1] : null;
      const target = name ? this.dialog.querySelector(`#fork-${name}-error`) : null;
      if (target) {
        setText(target, String(e.msg).replace(/^Value error, /, ""));
        target.hidden = false;
      } else unplaced.push(e.msg);
    }
    const placed = (error.errors || []).length > unplaced.length;
    setText(
      this.problem,
      placed && !unplaced.length ? "The server did not take these changes: see the marked fields." : error.message,
    );
    this.problem.hidden = false;
  }
}

function field(id, label, note, input, name) {
  return h(
    "div",
    { class: "field" },
    h("label", { for: id }, label, " ", h("span", { class: "muted", id: `${id}-note` }, `(${note})`)),
    input,
    h("p", { class: "field-error", id: `fork-${name}-error`, hidden: true }),
  );
}

function fact(term, value) {
  return h("div", { class: "fact" }, h("dt", {}, term), h("dd", {}, value));
}
