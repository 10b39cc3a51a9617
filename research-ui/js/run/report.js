// The report (the server's sanitised HTML, its <body> content inserted as DOM nodes — never as a string
// into innerHTML, and re-checked against an allow-list on the way in), its downloads, and the run's files.
// While the model writes the report, its text so far (report_delta events) is shown as plain text: it is
// not checked yet, and the checked report replaces it once it is written.

import { api, urls } from "../core/api.js";
import { bytes, fill, h } from "../core/dom.js";
import { renderReportTools } from "./report-tools.js";

const ALLOWED = new Set([
  "H1",
  "H2",
  "H3",
  "H4",
  "P",
  "UL",
  "OL",
  "LI",
  "A",
  "EM",
  "STRONG",
  "CODE",
  "PRE",
  "BLOCKQUOTE",
  "TABLE",
  "THEAD",
  "TBODY",
  "TR",
  "TH",
  "TD",
  "HR",
  "BR",
  "SUP",
]);
const DROP = new Set([
  "SCRIPT",
  "STYLE",
  "IFRAME",
  "OBJECT",
  "EMBED",
  "LINK",
  "META",
  "TEMPLATE",
  "FORM",
  "SVG",
  "MATH",
]);
const KEEP_ATTRS = new Set(["href", "id", "title", "start", "class"]);

/**
 * Copy the report body into `target`, allow-listed element by element.
 * @returns {Map<number, number>} how often each source number is cited in the text (not in the Sources list)
 */
export function insertReport(html, target) {
  insertHtml(html, target);
  const citations = new Map();
  for (const link of target.querySelectorAll("a.cite")) {
    if (link.closest('[id^="source-"]')) continue; // the Sources list's own "[n]" cites nothing
    const n = Number(link.dataset.source);
    citations.set(n, (citations.get(n) || 0) + 1);
  }
  return citations;
}

/**
 * Insert server-rendered HTML (a passage, a fetched text: the report's rendering rule) into `target`,
 * allow-listed element by element as the report is.
 * @param {string} html
 * @param {HTMLElement} target
 */
export function insertHtml(html, target) {
  const doc = new DOMParser().parseFromString(`<!doctype html><body>${bodyOf(html)}</body>`, "text/html");
  const fragment = document.createDocumentFragment();
  for (const child of [...doc.body.childNodes]) {
    const clean = sanitize(child);
    if (clean) fragment.append(clean);
  }
  fill(target, fragment);
  return target;
}

/**
 * The markup inside <body>, without inline styles. Parsed documents inherit this page's CSP, so even an
 * inert parse of the report's own <style> element (or a style attribute) is reported as a violation.
 */
function bodyOf(html) {
  const open = /<body[^>]*>/i.exec(html);
  const close = html.search(/<\/body>/i);
  const body = open ? html.slice(open.index + open[0].length, close > open.index ? close : undefined) : html;
  return body
    .replace(/<style[\s\S]*?<\/style\s*>/gi, "")
    .replace(/\sstyle\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi, "");
}

/** @param {Node} node @returns {Node|null} */
function sanitize(node) {
  if (node.nodeType === Node.TEXT_NODE) return document.createTextNode(node.textContent || "");
  if (node.nodeType !== Node.ELEMENT_NODE) return null;
  const el = /** @type {Element} */ (node);
  if (DROP.has(el.tagName)) return null;
  const children = [...el.childNodes].map(sanitize).filter(Boolean);
  if (!ALLOWED.has(el.tagName)) {
    const fragment = document.createDocumentFragment();
    fragment.append(...children);
    return fragment;
  }
  if (el.tagName === "A") return link(el, children);
  const out = document.createElement(el.tagName.toLowerCase());
  for (const attr of el.attributes) {
    if (KEEP_ATTRS.has(attr.name) && attr.name !== "href") out.setAttribute(attr.name, attr.value);
  }
  out.append(...children);
  return out;
}

function link(el, children) {
  const href = el.getAttribute("href") || "";
  const cite = /^#source-(\d+)$/.exec(href);
  if (cite) {
    const a = h("a", { href, class: "cite", "data-source": cite[1], "aria-label": `Source ${cite[1]}` });
    a.append(...children);
    return a;
  }
  if (href.startsWith("#")) {
    const a = h("a", { href, class: "anchor" });
    a.append(...children);
    return a;
  }
  if (/^https?:\/\//i.test(href)) {
    const a = h("a", { href, target: "_blank", rel: "noopener noreferrer nofollow" });
    a.append(...children);
    return a;
  }
  const span = h("span", { class: "link-like", title: href });
  span.append(...children);
  return span;
}

export class ReportView {
  /**
   * @param {{tools: HTMLElement, article: HTMLElement, files: HTMLElement}} els
   * @param {{onCite: (n: number, link: HTMLElement) => void}} actions
   */
  constructor(els, actions) {
    this.els = els;
    this.actions = actions;
    this.loadedFor = null;
    els.article.addEventListener("click", (event) => this.click(event));
    this.reset();
  }

  reset() {
    this.loadedFor = null;
    /** the model's text so far while the report is being written (null: nothing being written) */
    this.draft = null;
    this.draftKey = "";
    this.draftText = null;
    this.filesKey = "";
    this.selected = null;
    this.toolsFor = null;
    fill(this.els.tools);
    this.placeholder("The report is written in the last stage; it appears here when the run completes.");
    fill(this.els.files);
  }

  placeholder(text) {
    fill(this.els.article, h("p", { class: "empty muted" }, text));
  }

  click(event) {
    const anchor = event.target instanceof Element ? event.target.closest("a") : null;
    if (!anchor || !this.els.article.contains(anchor)) return;
    const href = anchor.getAttribute("href") || "";
    if (anchor.classList.contains("cite")) {
      event.preventDefault(); // the URL hash belongs to the app (#run=…)
      this.actions.onCite(Number(anchor.dataset.source), anchor);
    } else if (href.startsWith("#")) {
      event.preventDefault();
      const target = this.els.article.querySelector(`[id="${CSS.escape(href.slice(1))}"]`);
      target?.scrollIntoView({ block: "start" });
    }
  }

  /**
   * Load the report once the run has one.
   * @returns {Promise<Map<number, number>|null>} citation counts, or null when there is no report
   */
  async load(runId, status, artifacts) {
    const names = new Set(artifacts.map((a) => a.path));
    this.renderTools(runId, names);
    if (!names.has("deepresearch-report.html")) {
      this.loadedFor = null;
      if (this.draft) {
        this.renderDraft();
        return null;
      }
      this.placeholder(
        {
          cancelled:
            "No report yet: the run is paused before writing it. Continue the research to finish it.",
          failed: "No report yet: the run failed before writing it. Resume it from the activity view.",
          interrupted: "No report yet: the run was interrupted before writing it.",
        }[status] || "The report is written in the last stage; it appears here when the run completes.",
      );
      return null;
    }
    const key = `${runId}|${artifacts.find((a) => a.path === "deepresearch-report.html")?.size}`;
    if (this.loadedFor === key) return null;
    const html = await api.reportHtml(runId);
    this.loadedFor = key;
    return insertReport(html, this.els.article);
  }

  /**
   * The report as the model writes it: shown while the run is active and no checked report is in.
   * @param {{text: string, attempt: number}|null} draft
   * @param {boolean} active
   */
  setDraft(draft, active) {
    const next = active && draft && draft.text ? draft : null;
    if (this.loadedFor) return; // the checked report is shown: nothing replaces it
    if (!next) {
      if (this.draft) {
        this.draft = null;
        this.draftKey = "";
        this.placeholder("The report is written in the last stage; it appears here when the run completes.");
      }
      return;
    }
    this.draft = next;
    this.renderDraft();
  }

  renderDraft() {
    const draft = this.draft;
    const key = `${draft.attempt}|${draft.text.length}`;
    if (key === this.draftKey && this.els.article.contains(this.draftText)) return;
    this.draftKey = key;
    if (!this.draftText || !this.els.article.contains(this.draftText) || this.draftAttempt !== draft.attempt) {
      this.draftAttempt = draft.attempt;
      this.draftText = h("div", { class: "report-draft-text" });
      fill(
        this.els.article,
        h(
          "p",
          { class: "report-draft-note muted", role: "status" },
          draft.attempt > 1
            ? "The model is writing the report again (its first answer was unusable)…"
            : "The model is writing the report…",
          " Shown as plain text until it is finished and every citation is checked.",
        ),
        this.draftText,
      );
    }
    // textContent: the model's text is never parsed as markup
    this.draftText.textContent = draft.text;
  }

  /**
   * The name the run's downloads carry (its detail's `download_stem`). It may come in after the tools are
   * drawn (the detail is refreshed while the files load): they are drawn again with it.
   */
  setFileName(stem) {
    const next = stem || "deepresearch-report";
    if (next === this.stem) return;
    this.stem = next;
    if (this.toolsFor) this.renderTools(this.toolsFor.runId, this.toolsFor.names);
  }

  renderTools(runId, names) {
    this.toolsFor = { runId, names };
    renderReportTools(this.els.tools, runId, names, this.stem || "deepresearch-report");
  }

  // --- the run's files -----------------------------------------------------------------------------------
  /** @param {string} runId @param {{path: string, size: number}[]} artifacts */
  renderFiles(runId, artifacts) {
    const key = `${runId}|${JSON.stringify(artifacts)}`;
    if (key === this.filesKey) return;
    this.filesKey = key;
    if (!artifacts.length) {
      fill(
        this.els.files,
        h("p", { class: "empty muted" }, "The run's files appear here as stages write them."),
      );
      return;
    }
    this.preview ??= h("div", { class: "file-preview", "aria-live": "polite" });
    const list = h(
      "ul",
      { class: "file-list", "aria-label": "Files of this run" },
      artifacts.map((file) =>
        h(
          "li",
          { class: "file-row" },
          h(
            "button",
            {
              type: "button",
              class: "file-name",
              "aria-pressed": String(this.selected === file.path),
              on: { click: () => this.showFile(runId, file) },
            },
            h("span", { text: file.path }),
            h("span", { class: "muted", text: bytes(file.size) }),
          ),
          h(
            "a",
            {
              class: "file-dl",
              href: urls.artifact(runId, file.path),
              download: file.path.split("/").pop(),
              "aria-label": `Download ${file.path}`,
            },
            "Download",
          ),
        ),
      ),
    );
    if (!this.selected) fill(this.preview, h("p", { class: "empty muted" }, "Pick a file to look inside."));
    fill(this.els.files, h("div", { class: "files-layout" }, list, this.preview));
  }

  async showFile(runId, file) {
    this.selected = file.path;
    for (const button of this.els.files.querySelectorAll(".file-name")) {
      button.setAttribute("aria-pressed", String(button.firstChild?.textContent === file.path));
    }
    const head = h(
      "div",
      { class: "file-preview-head" },
      h("strong", { text: file.path }),
      h("span", { class: "muted", text: bytes(file.size) }),
    );
    if (file.path.endsWith(".html")) {
      fill(
        this.preview,
        head,
        h(
          "p",
          {},
          "A self-contained page. ",
          h(
            "a",
            { href: urls.artifact(runId, file.path), target: "_blank", rel: "noopener" },
            "Open it in a new tab",
          ),
          ".",
        ),
      );
      return;
    }
    fill(this.preview, head, h("p", { class: "muted" }, "Loading…"));
    try {
      let text = await api.artifactText(runId, file.path);
      if (file.path.endsWith(".json")) {
        try {
          text = JSON.stringify(JSON.parse(text), null, 2);
        } catch {
          /* show it as it is */
        }
      }
      const cut = text.length > 200_000;
      fill(
        this.preview,
        head,
        h("pre", { class: "file-text", tabindex: "0" }, cut ? `${text.slice(0, 200_000)}\n…` : text),
      );
    } catch (error) {
      fill(this.preview, head, h("p", { class: "form-error" }, `Could not read the file: ${error.message}`));
    }
  }
}
