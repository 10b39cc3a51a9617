// Reading a source: a dialog with what the run knows of it (title, where the fetch ended, its date in
// plain words), the passages the run took from it (rendered by the server's report rule) and the whole text
// the run read (from the receipt of its fetch: nothing is fetched again). And the preview of a citation:
// hovering or focusing `[n]` in the report shows the passages quoted from source n.

import { api } from "../core/api.js";
import { bytes, domainOf, fill, h, isWebUrl, sourceDate } from "../core/dom.js";
import { insertHtml } from "./report.js";

/**
 * @typedef {{n: number, url: string, title?: string, final_url?: string, published?: string,
 *   extractor?: string, bytes?: number, domain?: string}} SourceRow
 * @typedef {{html: string|null, text: string, subQuestion: string}} Passage
 */

export class SourceReader {
  /**
   * @param {{runId: () => string|null, passagesFor: (n: number) => Passage[]}} hooks
   */
  constructor(hooks) {
    this.hooks = hooks;
    this.dialog = /** @type {HTMLDialogElement} */ (
      h("dialog", { class: "source-reader", "aria-labelledby": "source-reader-title" })
    );
    this.dialog.addEventListener("click", (event) => {
      if (event.target === this.dialog) this.dialog.close(); // a click on the backdrop
    });
    this.dialog.addEventListener("close", () => this.opener?.focus());
    document.body.append(this.dialog);
    /** a newer open() supersedes a text still loading */
    this.token = 0;
  }

  /**
   * @param {SourceRow} row
   * @param {HTMLElement} [opener] focus goes back there when the dialog closes
   */
  async open(row, opener) {
    const runId = this.hooks.runId();
    if (!runId) return;
    this.opener = opener || null;
    const token = ++this.token;
    const text = h("div", { class: "source-text" }, h("p", { class: "muted" }, "Loading the text…"));
    const passages = this.hooks.passagesFor(row.n);
    const close = h("button", { type: "button", class: "btn btn-small", on: { click: () => this.dialog.close() } }, "Close");
    fill(
      this.dialog,
      h(
        "header",
        { class: "source-reader-head" },
        h("span", { class: "source-n", text: String(row.n) }),
        h("h2", { id: "source-reader-title", text: row.title || row.url }),
        close,
      ),
      h(
        "p",
        { class: "source-meta muted" },
        [domainOf(row.final_url || row.url), bytes(row.bytes), sourceDate(row)].filter(Boolean).join(" · "),
      ),
      isWebUrl(row.url)
        ? h(
            "p",
            { class: "source-where" },
            h("a", { href: row.final_url || row.url, target: "_blank", rel: "noopener noreferrer" }, "Open the original"),
          )
        : h("p", { class: "source-where muted", text: `A local document on the server: ${row.url}` }),
      h("h3", {}, passages.length ? `Passages the run used (${passages.length})` : "No passage of it was used"),
      passages.length ? h("ol", { class: "source-passages" }, passages.map((p) => passageItem(p))) : null,
      h("h3", {}, "The text the run read"),
      text,
    );
    if (!this.dialog.open) this.dialog.showModal();
    close.focus();
    try {
      const read = await api.sourceText(runId, row.url);
      if (token !== this.token) return;
      const moved = read.final_url !== row.url;
      fill(
        text,
        h(
          "p",
          { class: "muted" },
          `${read.chars.toLocaleString()} characters` +
            (moved ? `, read at ${read.final_url} after ${read.redirects.length || 1} redirect(s)` : ""),
        ),
        insertHtml(read.html, h("div", { class: "source-text-body" })),
      );
    } catch (error) {
      if (token !== this.token) return;
      fill(text, h("p", { class: "notice" }, `The text is not available: ${error.message}`));
    }
  }
}

function passageItem(passage) {
  const body = h("div", { class: "source-passage" });
  if (passage.html) insertHtml(passage.html, body);
  else body.textContent = passage.text;
  return h("li", {}, passage.subQuestion ? h("p", { class: "muted small", text: passage.subQuestion }) : null, body);
}

/**
 * Hovering or focusing a citation `[n]` in `article` shows the passages quoted from source n, under it.
 * @param {HTMLElement} article
 * @param {{titleOf: (n: number) => string, passagesFor: (n: number) => Passage[]}} hooks
 */
export function citePreviews(article, hooks) {
  const tip = h("div", { class: "cite-preview", role: "tooltip", id: "cite-preview", hidden: true });
  document.body.append(tip);
  let current = null;
  const show = (link) => {
    const n = Number(link.dataset.source);
    const passages = hooks.passagesFor(n);
    current = link;
    fill(
      tip,
      h("p", { class: "cite-preview-title" }, h("strong", {}, `[${n}] `), hooks.titleOf(n)),
      passages.length
        ? passages.slice(0, 2).map((p) => {
            const body = h("blockquote", { class: "source-passage" });
            if (p.html) insertHtml(p.html, body);
            else body.textContent = p.text;
            return body;
          })
        : h("p", { class: "muted" }, "No quoted passage of this source is loaded."),
      passages.length > 2 ? h("p", { class: "muted small" }, `and ${passages.length - 2} more: click to see the source`) : null,
    );
    tip.hidden = false;
    link.setAttribute("aria-describedby", "cite-preview");
    const box = link.getBoundingClientRect();
    const width = Math.min(420, window.innerWidth - 16);
    tip.style.width = `${width}px`;
    tip.style.left = `${Math.max(8, Math.min(box.left + window.scrollX, window.scrollX + window.innerWidth - width - 8))}px`;
    tip.style.top = `${box.bottom + window.scrollY + 6}px`;
  };
  const hide = (link) => {
    if (current !== link) return;
    tip.hidden = true;
    link.removeAttribute("aria-describedby");
    current = null;
  };
  const citeOf = (event) => (event.target instanceof Element ? event.target.closest("a.cite") : null);
  article.addEventListener("mouseover", (event) => {
    const link = citeOf(event);
    if (link) show(link);
  });
  article.addEventListener("mouseout", (event) => {
    const link = citeOf(event);
    if (link) hide(link);
  });
  article.addEventListener("focusin", (event) => {
    const link = citeOf(event);
    if (link) show(link);
  });
  article.addEventListener("focusout", (event) => {
    const link = citeOf(event);
    if (link) hide(link);
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && current) hide(current);
  });
}
