// Past and current runs, newest first: status, question, when, tokens and cost. Refreshed every few
// seconds while the page is visible (a run can be started or resumed by another tab or the CLI).

import { api } from "./api.js";
import { ago, compact, fill, h, setText, usd } from "./dom.js";
import { STATUS_LABEL } from "./nodes.js";

const PAGE = 30;
const REFRESH_MS = 4000;

export class HistoryView {
  /**
   * @param {{list: HTMLElement, empty: HTMLElement, more: HTMLButtonElement, filter: HTMLSelectElement}} els
   * @param {{onRuns: (runs: any[]) => void}} hooks
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
  patch(runId, status) {
    const pill = this.els.list.querySelector(`li[data-run="${CSS.escape(runId)}"] .status-pill`);
    if (!pill || pill.dataset.status === status) return;
    pill.dataset.status = status;
    setText(pill, STATUS_LABEL[status] || status);
  }

  async refresh() {
    if (!this.running) return;
    clearTimeout(this.timer);
    const generation = this.generation;
    try {
      const page = await api.listRuns({ status: this.els.filter.value, limit: this.limit });
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
      this.els.filter.value ? "No runs with this status." : "No research yet. Ask a question to start.",
    );
    more.hidden = page.next_offset === null || page.next_offset === undefined;
    const existing = new Map([...list.children].map((li) => [li.dataset.run, li]));
    const items = page.runs.map((run) => {
      const key = JSON.stringify([run.status, run.updated_at, run.usage?.tokens, run.usage?.cost_usd]);
      let li = existing.get(run.run_id);
      if (!li || li.dataset.key !== key) li = this.item(run, key);
      // relative times move on even when nothing else changed
      const when = li.querySelector(".h-when");
      if (when) setText(when, ago(run.created_at));
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
    const link = h(
      "a",
      { class: "h-link", href: `#run=${encodeURIComponent(run.run_id)}`, "data-run": run.run_id },
      h(
        "span",
        { class: "h-top" },
        h("span", {
          class: "status-pill is-small",
          "data-status": run.status,
          text: STATUS_LABEL[run.status] || run.status,
        }),
        h("span", { class: "h-when muted", text: ago(run.created_at) }),
      ),
      h("span", { class: "h-question", text: run.question }),
      meta ? h("span", { class: "h-meta muted", text: meta }) : null,
    );
    if (run.run_id === this.currentId) link.setAttribute("aria-current", "page");
    return h("li", { "data-run": run.run_id, "data-key": key }, link);
  }
}
