// Past and current runs, newest first: status, title (or question), when (an absolute date), tokens and
// cost, badges for waiting, resumed and forked runs (a fork is a branch of its run: it stays under it).
// Searched on the server (?q=), renamed (PATCH) and deleted (with a confirmation) in place. Refreshed every
// few seconds while the page is visible (a run can be started or resumed by another tab or the CLI).

import { api } from "../core/api.js";
import { ago, compact, fill, h, plural, setText, usd, when } from "../core/dom.js";
import { statusLabel } from "../core/nodes.js";

const PAGE = 30;
const REFRESH_MS = 4000;

export class HistoryView {
  /**
   * @param {{list: HTMLElement, empty: HTMLElement, more: HTMLButtonElement, filter: HTMLSelectElement,
   *   search: HTMLInputElement}} els
   * @param {{onRuns: (runs: any[]) => void, onDeleted: (runId: string) => void,
   *   onRenamed: (run: any) => void}} hooks
   */
  constructor(els, hooks) {
    this.els = els;
    this.hooks = hooks;
    this.limit = PAGE;
    this.currentId = null;
    this.timer = 0;
    this.runs = [];
    /** polling only while signed in: without a session every poll would be refused */
    this.running = false;
    /** bumped by stop(): an answer asked for before it (another user's, maybe) is dropped */
    this.generation = 0;
    els.filter.addEventListener("change", () => {
      this.limit = PAGE;
      this.refresh();
    });
    let typing = 0;
    els.search.addEventListener("input", () => {
      clearTimeout(typing);
      typing = setTimeout(() => {
        this.limit = PAGE;
        this.refresh();
      }, 250);
    });
    /** the run being renamed or asked about deleting: its item is not redrawn under the person's hands */
    this.editing = null;
    els.more.addEventListener("click", () => {
      this.limit += PAGE;
      this.refresh();
    });
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible" && this.running) this.refresh();
    });
  }

  start() {
    this.running = true;
    this.refresh();
  }

  /** Stop polling; `clear`: forget the list too (signed out: the next user must not see it). */
  stop({ clear = false } = {}) {
    this.running = false;
    this.generation += 1;
    clearTimeout(this.timer);
    this.timer = 0;
    if (clear) {
      this.runs = [];
      this.els.list.replaceChildren();
      this.els.more.hidden = true;
    }
  }

  /** @param {string|null} runId */
  setCurrent(runId) {
    this.currentId = runId;
    for (const link of this.els.list.querySelectorAll("a[data-run]")) {
      if (link.dataset.run === runId) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
  }

  /** The open run's status as its stream tells it, ahead of the next poll. */
  patch(runId, status, error = null) {
    const pill = this.els.list.querySelector(`li[data-run="${CSS.escape(runId)}"] .status-pill`);
    if (!pill || pill.dataset.status === status) return;
    pill.dataset.status = status;
    setText(pill, statusLabel(status, error));
  }

  async refresh() {
    if (!this.running) return;
    clearTimeout(this.timer);
    const generation = this.generation;
    try {
      const q = this.els.search.value.trim();
      const page = await api.listRuns({ status: this.els.filter.value, limit: this.limit, q });
      if (generation !== this.generation) return; // signed out while the answer was on its way
      this.runs = page.runs;
      this.render(page);
      this.hooks.onRuns(page.runs);
    } catch {
      /* the connection banner tells about the server; keep the last list */
    } finally {
      if (this.running && generation === this.generation) {
        this.timer = setTimeout(() => {
          if (document.visibilityState === "visible") this.refresh();
          else this.timer = 0;
        }, REFRESH_MS);
      }
    }
  }

  render(page) {
    const { list, empty, more } = this.els;
    empty.hidden = page.runs.length > 0;
    setText(
      empty,
      this.els.search.value.trim()
        ? "No run matches this search."
        : this.els.filter.value
          ? "No runs with this status."
          : "No research yet. Ask a question to start.",
    );
    more.hidden = page.next_offset === null || page.next_offset === undefined;
    const existing = new Map([...list.children].map((li) => [li.dataset.run, li]));
    const items = underTheirRun(page.runs).map((run) => {
      const key = JSON.stringify([
        run.status,
        run.updated_at,
        run.usage?.tokens,
        run.usage?.cost_usd,
        run.parentShown,
      ]);
      let li = existing.get(run.run_id);
      const busy = this.editing === run.run_id && li;
      if (!busy && (!li || li.dataset.key !== key)) li = this.item(run, key);
      return li;
    });
    const same = items.length === list.children.length && items.every((li, i) => list.children[i] === li);
    if (!same) fill(list, ...items);
  }

  item(run, key) {
    const tokens = run.usage?.tokens || 0;
    const cost = run.usage?.cost_usd || 0;
    const meta = [tokens ? `${compact(tokens)} tokens` : null, cost ? usd(cost) : null]
      .filter(Boolean)
      .join(" · ");
    const badges = [
      run.status === "waiting_for_input"
        ? h("span", {
            class: "tag is-input",
            text: "waiting for you",
            title: run.pending_input?.since
              ? `Its plan waits for your review (it began waiting ${ago(run.pending_input.since)})`
              : "Its plan waits for your review",
          })
        : null,
      run.forked_from
        ? h("span", { class: "tag is-fork", text: "fork", title: `A new run forked from ${run.forked_from.run_id}` })
        : null,
      run.follow_up_of
        ? h("span", { class: "tag is-follow-up", text: "follow-up", title: `A follow-up of ${run.follow_up_of}` })
        : null,
      run.status === "queued"
        ? h("span", {
            class: "tag is-waiting",
            text: run.queue_position ? `queued #${run.queue_position}` : "waiting",
            title: run.queue_position ? "Waiting for a free slot on the runner; 1 goes next" : "",
          })
        : null,
      run.resumes ? h("span", { class: "tag", text: run.resumes > 1 ? `resumed ×${run.resumes}` : "resumed" }) : null,
      run.forks ? h("span", { class: "tag is-fork", text: run.forks > 1 ? `forked ×${run.forks}` : "forked" }) : null,
    ].filter(Boolean);
    const link = h(
      "a",
      { class: "h-link", href: `#run=${encodeURIComponent(run.run_id)}`, "data-run": run.run_id },
      h(
        "span",
        { class: "h-top" },
        h("span", {
          class: "status-pill is-small",
          "data-status": run.status,
          text: statusLabel(run.status, run.error),
        }),
        h("time", {
          class: "h-when muted",
          datetime: run.created_at,
          title: ago(run.created_at),
          text: when(run.created_at),
        }),
      ),
      h("span", { class: "h-question", text: run.title || run.question }),
      run.title ? h("span", { class: "h-asked muted", text: run.question }) : null,
      badges.length ? h("span", { class: "h-badges" }, badges) : null,
      run.forks
        ? h("span", {
            class: "h-forks muted",
            text: `↳ ${plural(run.forks, "fork")} of this run, each a branch from an older checkpoint`,
          })
        : null,
      meta ? h("span", { class: "h-meta muted", text: meta }) : null,
    );
    if (run.run_id === this.currentId) link.setAttribute("aria-current", "page");
    const li = h("li", { "data-run": run.run_id, "data-key": key }, link);
    if (run.parentShown) {
      li.classList.add("is-branch");
      li.dataset.parent = run.parentShown;
    }
    li.append(this.actionsFor(run, li));
    return li;
  }

  /** Rename and delete, under the item. */
  actionsFor(run, li) {
    const label = run.title || run.question;
    return h(
      "span",
      { class: "h-actions" },
      h(
        "button",
        {
          type: "button",
          class: "link-btn",
          "aria-label": `Rename “${label.slice(0, 60)}”`,
          on: { click: () => this.rename(run, li) },
        },
        "Rename",
      ),
      h(
        "button",
        {
          type: "button",
          class: "link-btn is-danger",
          "aria-label": `Delete “${label.slice(0, 60)}”`,
          on: { click: () => this.confirmDelete(run, li) },
        },
        "Delete",
      ),
    );
  }

  /** An inline field in place of the title: Enter saves, Escape keeps the old name; empty = the question. */
  rename(run, li) {
    this.editing = run.run_id;
    li.dataset.key = ""; // drawn again when the edit ends
    const input = /** @type {HTMLInputElement} */ (
      h("input", {
        type: "text",
        class: "h-rename",
        value: run.title || run.question,
        maxlength: "200",
        "aria-label": "New name of the run (empty: its question)",
      })
    );
    const problem = h("span", { class: "field-error", hidden: true });
    const done = () => {
      this.editing = null;
      this.refresh();
    };
    const save = async () => {
      const title = input.value.trim();
      try {
        const renamed = await api.renameRun(run.run_id, title && title !== run.question ? title : null);
        this.hooks.onRenamed(renamed);
        done();
      } catch (error) {
        problem.hidden = false;
        setText(problem, `Could not rename: ${error.message}`);
      }
    };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        save();
      } else if (event.key === "Escape") {
        event.preventDefault();
        done();
      }
    });
    fill(
      li,
      h(
        "div",
        { class: "h-edit" },
        input,
        h(
          "span",
          { class: "h-actions" },
          h("button", { type: "button", class: "btn btn-small", on: { click: save } }, "Save"),
          h("button", { type: "button", class: "link-btn", on: { click: done } }, "Cancel"),
        ),
        problem,
      ),
    );
    input.focus();
    input.select();
  }

  /** Deleting cannot be undone: the item asks first, in place. */
  confirmDelete(run, li) {
    this.editing = run.run_id;
    li.dataset.key = ""; // drawn again when the question is answered
    const problem = h("span", { class: "field-error", hidden: true });
    const keep = h(
      "button",
      {
        type: "button",
        class: "btn btn-small",
        on: {
          click: () => {
            this.editing = null;
            this.refresh();
          },
        },
      },
      "Keep it",
    );
    const remove = async () => {
      try {
        await api.deleteRun(run.run_id);
        this.editing = null;
        li.remove();
        this.hooks.onDeleted(run.run_id);
        this.refresh();
      } catch (error) {
        problem.hidden = false;
        setText(problem, `Not deleted: ${error.message}`);
      }
    };
    fill(
      li,
      h(
        "div",
        { class: "h-confirm", role: "group", "aria-label": "Delete this run?" },
        h("p", {}, "Delete “", h("strong", { text: (run.title || run.question).slice(0, 120) }), "”?"),
        h(
          "p",
          { class: "muted" },
          "Its report, sources, events and checkpoints go with it; this cannot be undone.",
        ),
        h(
          "span",
          { class: "h-actions" },
          h("button", { type: "button", class: "btn btn-small btn-danger", on: { click: remove } }, "Delete"),
          keep,
        ),
        problem,
      ),
    );
    keep.focus();
  }
}

/** The run a fork or a follow-up came from. */
export function parentOf(run) {
  return run.forked_from?.run_id || run.follow_up_of || null;
}

/**
 * Forks and follow-ups stay under their run (when it is on the page), in the server's order among
 * themselves; `parentShown` marks them so they are drawn as its branches.
 * @param {any[]} runs newest first
 */
export function underTheirRun(runs) {
  const ids = new Set(runs.map((r) => r.run_id));
  const children = new Map();
  const roots = [];
  for (const run of runs) {
    const parent = parentOf(run);
    if (parent && ids.has(parent) && parent !== run.run_id) {
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push({ ...run, parentShown: parent });
    } else roots.push({ ...run, parentShown: null });
  }
  const out = [];
  const seen = new Set();
  const visit = (run, depth) => {
    if (seen.has(run.run_id) || depth > 20) return; // a cycle cannot happen, but a loop stays bounded
    seen.add(run.run_id);
    out.push(run);
    for (const child of children.get(run.run_id) || []) visit(child, depth + 1);
  };
  for (const run of roots) visit(run, 0);
  for (const run of runs) if (!seen.has(run.run_id)) out.push({ ...run, parentShown: null });
  return out;
}
