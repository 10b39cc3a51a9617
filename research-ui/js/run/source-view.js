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

const WORD = /[\p{L}\p{N}]{3,}/gu;

/** @param {string} text */
function wordsOf(text) {
  return new Set(text.toLowerCase().match(WORD) || []);
}

/** A passage's sentences: a line without a full stop (a heading) runs into the next, as in the report. */
function sentencesOf(text) {
  return text
    .split(/(?<=[.!?])\s+/u)
    .map((s) => s.replace(/\s+/g, " ").trim())
    .filter(Boolean);
}

/**
 * The sentence a citation link ends: its paragraph's text before the link, after the sentence (or the
 * citation) before it.
 * @param {Element} link
 */
export function citedSentence(link) {
  const block = link.closest("p, li, td, th, dd, blockquote") || link.parentElement;
  if (!block) return "";
  const range = document.createRange();
  range.setStart(block, 0);
  range.setEndBefore(link);
  const parts = range.toString().split(/[.!?](?:\s+|$)|\]/);
  const last = [...parts].reverse().find((part) => part.replace(/\[\s*\d*\s*$/, "").trim());
  return (last || "").replace(/\[\s*\d*\s*$/, "").trim();
}

/**
 * Where in the source's passages `sentence` comes from: the passage sentence with the most words in common
 * (cosine of the word sets), and its neighbours; null when none has a word in common.
 * @param {Passage[]} passages
 * @param {string} sentence
 */
export function excerptFor(passages, sentence) {
  const wanted = wordsOf(sentence);
  let best = null;
  passages.forEach((passage, index) => {
    const sentences = sentencesOf(passage.text);
    sentences.forEach((candidate, at) => {
      const have = wordsOf(candidate);
      let common = 0;
      for (const word of have) if (wanted.has(word)) common += 1;
      const score = common / Math.sqrt(Math.max(1, wanted.size * have.size));
      if (common && (!best || score > best.score)) best = { score, index, sentences, at };
    });
  });
  if (!best) return null;
  const { sentences, at } = best;
  return {
    passage: best.index,
    before: (at > 1 ? "… " : "") + (sentences[at - 1] || ""),
    cited: sentences[at],
    after: (sentences[at + 1] || "") + (at + 2 < sentences.length ? " …" : ""),
  };
}

/** The preview's body: the cited sentence marked in its passage, else the source's first passages. */
function previewBody(passages, sentence) {
  const excerpt = sentence ? excerptFor(passages, sentence) : null;
  if (excerpt) {
    const others = passages.length - 1;
    return [
      h(
        "blockquote",
        { class: "source-passage" },
        excerpt.before ? `${excerpt.before} ` : "",
        h("mark", { text: excerpt.cited }),
        excerpt.after ? ` ${excerpt.after}` : "",
      ),
      others > 0 ? h("p", { class: "muted small" }, `and ${others} more passage(s): click to see the source`) : null,
    ];
  }
  return [
    ...passages.slice(0, 2).map((p) => {
      const body = h("blockquote", { class: "source-passage" });
      if (p.html) insertHtml(p.html, body);
      else body.textContent = p.text;
      return body;
    }),
    passages.length > 2 ? h("p", { class: "muted small" }, `and ${passages.length - 2} more: click to see the source`) : null,
  ];
}

/** Under the link when it fits (or has the more room), else above it; never past the window's edges. */
function place(tip, link) {
  const margin = 8;
  const gap = 6;
  const box = link.getBoundingClientRect();
  const width = Math.min(420, window.innerWidth - 2 * margin);
  tip.style.width = `${width}px`;
  tip.style.maxHeight = "";
  const below = window.innerHeight - box.bottom - gap - margin;
  const above = box.top - gap - margin;
  const wanted = Math.min(tip.offsetHeight, window.innerHeight * 0.5);
  const under = wanted <= below || below >= above;
  const height = Math.max(0, Math.min(wanted, under ? below : above));
  tip.style.maxHeight = `${height}px`;
  const top = under ? box.bottom + gap : box.top - gap - height;
  const left = Math.max(margin, Math.min(box.left, window.innerWidth - width - margin));
  tip.style.top = `${top + window.scrollY}px`;
  tip.style.left = `${left + window.scrollX}px`;
  // the cited sentence in view inside the popover (a long passage scrolls); not scrollIntoView, which
  // could scroll the page under it too
  const mark = /** @type {HTMLElement|null} */ (tip.querySelector("mark"));
  tip.scrollTop = mark ? Math.max(0, mark.offsetTop - tip.clientHeight / 3) : 0;
}

/**
 * Hovering or focusing a citation `[n]` in `article` shows where source n says what the sentence says.
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
      ...(passages.length
        ? previewBody(passages, citedSentence(link))
        : [h("p", { class: "muted" }, "No quoted passage of this source is loaded.")]),
    );
    tip.hidden = false;
    link.setAttribute("aria-describedby", "cite-preview");
    place(tip, link);
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
