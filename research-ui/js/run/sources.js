// Sources and evidence: what the run fetched (or failed to), which citations use each source, and the
// evidence table as it is screened. Built from fetch events while they stream, then from the run's files
// as they appear: sources-fetched.json (each fetch round), evidence-table.json (screening), and the final
// sources.json / evidence.json (with the citation check).

import { bytes, domainOf, fill, h, isWebUrl, plural, setText, sourceDate } from "../core/dom.js";
import { insertHtml } from "./report.js";
import { fetchProblem } from "./timeline.js";

/**
 * @typedef {{fetched?: any, final?: any, table?: any, evidence?: any}} SourceFiles
 */

export class SourcesView {
  /**
   * @param {{list: HTMLElement, evidence: HTMLElement, sourcesCount: HTMLElement, evidenceCount: HTMLElement}} els
   * @param {{onShowSources: () => void, onRead: (row: any, opener: HTMLElement) => void}} actions
   */
  constructor(els, actions) {
    this.els = els;
    this.actions = actions;
    this.reset();
  }

  reset() {
    /** @type {SourceFiles} */
    this.files = {};
    /** @type {Map<number, number>} citation number → times cited in the report */
    this.citations = new Map();
    this.target = null;
    /** the evidence passages rendered by the server (GET …/passages), in the evidence file's order */
    this.passages = /** @type {{n: number, html: string}[]} */ ([]);
    this.rows = [];
    this.sourcesKey = "";
    this.evidenceKey = "";
    fill(this.els.list);
    fill(this.els.evidence);
  }

  /** @param {SourceFiles} files */
  setFiles(files) {
    this.files = { ...this.files, ...files };
  }

  /** @param {{n: number, html: string}[]} passages */
  setPassages(passages) {
    this.passages = passages;
    this.evidenceKey = ""; // drawn again, rendered
  }

  /**
   * The passages the run took from source n (rendered when the server's rendering is in).
   * @returns {import("./source-view.js").Passage[]}
   */
  passagesFor(n) {
    const questions = this.files.table?.sub_questions || [];
    return evidenceItems(this.files)
      .map((item, i) => ({ item, i }))
      .filter(({ item }) => item.n === n)
      .map(({ item, i }) => ({
        html: this.passages[i]?.n === n ? this.passages[i].html : null,
        text: item.passage || "",
        subQuestion: questions[item.sub_question_index ?? 0] || item.sub_question || "",
      }));
  }

  titleOf(n) {
    const row = this.rows.find((r) => r.n === n);
    return row ? row.title || row.url : `Source ${n}`;
  }

  /** @param {Map<number, number>} citations */
  setCitations(citations) {
    this.citations = citations;
  }

  /** @param {ReturnType<import("./model/events.js").createModel>} model */
  render(model) {
    const rows = sourceRows(model, this.files);
    this.rows = rows;
    const evidence = evidenceItems(this.files);
    const perSource = new Map();
    for (const item of evidence) perSource.set(item.n, (perSource.get(item.n) || 0) + 1);
    const key = JSON.stringify([rows, [...this.citations], [...perSource]]);
    if (key !== this.sourcesKey) {
      this.sourcesKey = key;
      this.renderSources(rows, perSource, model);
    }
    const evidenceKey = JSON.stringify([
      evidence.length,
      this.passages.length,
      this.files.evidence?.citation_check,
      this.files.table?.sub_questions,
      model.status,
    ]);
    if (evidenceKey !== this.evidenceKey) {
      this.evidenceKey = evidenceKey;
      this.renderEvidence(evidence, rows, model);
    }
    setText(
      this.els.sourcesCount,
      rows.filter((r) => r.n).length ? String(rows.filter((r) => r.n).length) : "",
    );
    setText(this.els.evidenceCount, evidence.length ? String(evidence.length) : "");
  }

  renderSources(rows, perSource, model) {
    const list = this.els.list;
    if (!rows.length) {
      const waiting = model.status === "running" || model.status === "queued";
      fill(
        list,
        h(
          "li",
          { class: "empty muted" },
          waiting ? "Sources appear here as they are fetched." : "No sources were fetched.",
        ),
      );
      return;
    }
    const read = (row, opener) => this.actions.onRead(row, opener);
    fill(list, ...rows.map((row) => sourceCard(row, perSource, this.citations, this.hasFinal(), read)));
    if (this.target !== null) this.mark(this.target, false);
  }

  hasFinal() {
    return Boolean(this.files.final);
  }

  renderEvidence(evidence, rows, model) {
    const box = this.els.evidence;
    const titles = new Map(rows.filter((r) => r.n).map((r) => [r.n, r.title || r.url]));
    const parts = [];
    const check = this.files.evidence?.citation_check;
    if (check) parts.push(citationCheck(check));
    if (!evidence.length) {
      const screening = model.status === "running" || model.status === "queued";
      parts.push(
        h(
          "p",
          { class: "empty muted" },
          screening ? "Evidence appears here once passages are screened." : "No evidence was screened.",
        ),
      );
      fill(box, ...parts);
      return;
    }
    const questions = this.files.table?.sub_questions || [];
    const groups = new Map();
    for (const item of evidence) {
      const index = item.sub_question_index ?? 0;
      if (!groups.has(index)) groups.set(index, []);
      groups.get(index).push(item);
    }
    for (const [index, items] of [...groups].sort((a, b) => a[0] - b[0])) {
      const question = questions[index] || items[0].sub_question || `Sub-question ${index + 1}`;
      parts.push(
        h(
          "section",
          { class: "sq" },
          h(
            "h2",
            { class: "sq-title" },
            h("span", { class: "sq-n", text: `Q${index + 1}` }),
            h("span", { text: question }),
          ),
          h(
            "ol",
            { class: "ev-list" },
            items.map((item) => this.evidenceRow(item, titles, evidence.indexOf(item))),
          ),
        ),
      );
    }
    fill(box, ...parts);
  }

  evidenceRow(item, titles, index) {
    // rendered by the server's report rule once it is in; plain text until then (never parsed here)
    const rendered = this.passages[index]?.n === item.n ? this.passages[index].html : null;
    const passage = rendered
      ? insertHtml(rendered, h("div", { class: "ev-passage is-clamped" }))
      : h("div", { class: "ev-passage is-clamped", text: item.passage });
    const more = h(
      "button",
      { type: "button", class: "link-btn ev-more", "aria-expanded": "false" },
      "Show all",
    );
    more.addEventListener("click", () => {
      const open = passage.classList.toggle("is-clamped") === false;
      more.setAttribute("aria-expanded", String(open));
      more.textContent = open ? "Show less" : "Show all";
    });
    const score =
      item.relevance !== null && item.relevance !== undefined
        ? `relevance ${Number(item.relevance).toFixed(2)}`
        : `BM25 ${Number(item.bm25 || 0).toFixed(1)}`;
    return h(
      "li",
      { class: "ev" },
      h(
        "div",
        { class: "ev-head" },
        h(
          "button",
          {
            type: "button",
            class: "source-ref",
            "aria-label": `Show source ${item.n}`,
            on: { click: () => this.reveal(item.n) },
          },
          `[${item.n}]`,
        ),
        h("span", { class: "ev-source", text: titles.get(item.n) || `Source ${item.n}` }),
        h("span", { class: "ev-score muted", text: score }),
      ),
      passage,
      item.passage && item.passage.length > 280 ? more : null,
      item.reason && item.reason !== "on topic" && item.reason !== "BM25 rank"
        ? h("p", { class: "ev-reason muted", text: item.reason })
        : null,
    );
  }

  /**
   * Bring source `n` into view in the sources panel and mark it.
   * @param {number} n
   * @param {HTMLElement} [from] the citation that asked: the card offers a way back to it
   */
  reveal(n, from) {
    this.actions.onShowSources();
    this.back = from || null;
    this.mark(n, true);
  }

  mark(n, scroll) {
    this.target = n;
    for (const el of this.els.list.querySelectorAll(".is-target")) el.classList.remove("is-target");
    for (const el of this.els.list.querySelectorAll(".back-to-text")) el.remove();
    const card = document.getElementById(`src-${n}`);
    if (!card) return;
    card.classList.add("is-target");
    const back = this.back;
    if (back && back.isConnected) {
      const button = h("button", { type: "button", class: "link-btn back-to-text" }, "↩ Back to the text");
      button.addEventListener("click", () => {
        back.scrollIntoView({ block: "center" });
        back.focus();
      });
      card.append(button);
    }
    if (scroll) {
      card.scrollIntoView({
        block: "nearest",
        behavior: matchMedia("(prefers-reduced-motion: reduce)").matches ? "auto" : "smooth",
      });
      card.focus({ preventScroll: true });
    }
  }
}

/** Every source the run fetched or tried, numbered ones first. */
export function sourceRows(model, files) {
  const byUrl = new Map();
  const listed = files.final?.sources || files.fetched?.sources || [];
  for (const src of listed) byUrl.set(src.url, { ...src, status: "ok" });
  for (const failure of files.fetched?.failures || []) {
    if (!byUrl.has(failure.url)) {
      byUrl.set(failure.url, {
        url: failure.url,
        status: "failed",
        error: failure.error,
        reason: failure.reason,
      });
    }
  }
  for (const [url, fetch] of model.fetches) {
    const row = byUrl.get(url);
    if (!row) {
      byUrl.set(url, {
        url,
        status: fetch.status,
        title: fetch.title,
        bytes: fetch.bytes,
        error: fetch.error,
        reason: fetch.reason,
      });
    } else if (!row.n && fetch.status === "ok") {
      Object.assign(row, { status: "ok", title: row.title || fetch.title, bytes: row.bytes ?? fetch.bytes });
    }
  }
  const rank = (row) => (row.n ? 0 : row.status === "running" ? 1 : row.status === "ok" ? 2 : 3);
  return [...byUrl.values()].sort((a, b) => rank(a) - rank(b) || (a.n || 0) - (b.n || 0));
}

function evidenceItems(files) {
  return files.evidence?.evidence || files.table?.evidence || [];
}

function sourceCard(row, perSource, citations, hasFinal, read) {
  const title = row.title || row.url;
  const domain = row.domain && row.domain !== "local" ? row.domain : domainOf(row.url);
  const meta = [
    domain,
    row.bytes ? bytes(row.bytes) : null,
    // a day is what a reader needs, in words; a local document's date is when its file changed
    sourceDate(row) || null,
  ].filter(Boolean);
  const tags = [];
  if (row.status === "running") tags.push(h("span", { class: "tag is-running" }, "fetching…"));
  else if (row.status === "failed") tags.push(h("span", { class: "tag is-failed" }, "not fetched"));
  else tags.push(h("span", { class: "tag is-ok" }, row.extractor === "corpus" ? "read" : "fetched"));
  if (row.n) {
    const cited = citations.get(row.n) || 0;
    if (cited) tags.push(h("span", { class: "tag is-cited" }, `cited ${cited}× in the report`));
    else if (row.cited) tags.push(h("span", { class: "tag is-cited" }, "cited in the report"));
    else if (hasFinal) tags.push(h("span", { class: "tag" }, "not cited"));
    const evidence = perSource.get(row.n) || 0;
    if (evidence) tags.push(h("span", { class: "tag" }, plural(evidence, "evidence passage")));
  }
  const heading = isWebUrl(row.url)
    ? h("a", {
        class: "source-title",
        href: row.url,
        target: "_blank",
        rel: "noopener noreferrer",
        text: title,
      })
    : h("span", { class: "source-title", text: title });
  return h(
    "li",
    {
      class: "source",
      id: row.n ? `src-${row.n}` : null,
      "data-status": row.status,
      tabindex: row.n ? "-1" : null,
    },
    h(
      "div",
      { class: "source-head" },
      row.n ? h("span", { class: "source-n", text: String(row.n) }) : null,
      heading,
    ),
    meta.length ? h("p", { class: "source-meta muted", text: meta.join(" · ") }) : null,
    row.snippet ? h("p", { class: "source-snippet", text: row.snippet }) : null,
    row.status === "failed"
      ? h("p", { class: "source-error", text: fetchProblem(row.url, row.error, row.reason) })
      : null,
    h(
      "p",
      { class: "source-tags" },
      tags,
      row.n && row.status === "ok"
        ? h(
            "button",
            {
              type: "button",
              class: "link-btn source-read",
              on: { click: (event) => read(row, /** @type {HTMLElement} */ (event.currentTarget)) },
            },
            "Read the source",
          )
        : null,
    ),
  );
}

function citationCheck(check) {
  const removed = check.citations_removed || [];
  return h(
    "div",
    { class: "citation-check" },
    h(
      "p",
      {},
      h("strong", {}, "Citation check: "),
      `${check.citations_supported} of ${check.citations_checked} citations supported by their source`,
      removed.length ? `; ${removed.length} removed` : "",
      check.sentences_left_unverified
        ? `; ${check.sentences_left_unverified} sentence(s) marked unverified`
        : "",
      ".",
    ),
    removed.length
      ? h(
          "details",
          {},
          h("summary", {}, "Removed citations"),
          h(
            "ul",
            {},
            removed.map((r) =>
              h("li", {}, h("strong", {}, `[${r.citation}] ${r.reason}: `), r.sentence || ""),
            ),
          ),
        )
      : null,
    h("p", { class: "muted small", text: `Method: ${check.method}` }),
  );
}
