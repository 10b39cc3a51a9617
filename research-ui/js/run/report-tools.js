// The report's tools: downloads named after the run's topic (the server's `download_stem`), Word (DOCX, made
// by the server), PDF (the browser's print dialog with the print stylesheet: just the report), and copying
// the report's Markdown.

import { api, urls } from "../core/api.js";
import { fill, h, setText } from "../core/dom.js";

/**
 * @param {HTMLElement} box
 * @param {string} runId
 * @param {Set<string>} names the run's files
 * @param {string} stem the file name the downloads carry
 */
export function renderReportTools(box, runId, names, stem) {
  const report = names.has("deepresearch-report.md");
  const downloads = [
    ["deepresearch-report.md", "Markdown", urls.report(runId, "md"), `${stem}.md`],
    ["deepresearch-report.html", "HTML", urls.report(runId, "html"), `${stem}.html`],
    ["deepresearch-report.md", "Word", urls.docx(runId), `${stem}.docx`],
    ["sources.json", "sources.json", urls.artifact(runId, "sources.json"), `${stem}-sources.json`],
    ["evidence.json", "evidence.json", urls.artifact(runId, "evidence.json"), `${stem}-evidence.json`],
  ].filter(([name]) => names.has(name));
  if (!downloads.length) {
    fill(box);
    return;
  }
  const said = h("span", { class: "copy-note muted", role: "status" });
  fill(
    box,
    h("span", { class: "muted" }, "Download"),
    ...downloads.map(([, label, href, file]) => h("a", { class: "btn btn-small", href, download: file }, label)),
    report
      ? h(
          "button",
          {
            type: "button",
            class: "btn btn-small",
            title: "Print the report, or save it as a PDF from the print dialog",
            on: { click: () => window.print() },
          },
          "PDF / print",
        )
      : null,
    report
      ? h(
          "button",
          { type: "button", class: "btn btn-small", on: { click: () => copyMarkdown(runId, said) } },
          "Copy as Markdown",
        )
      : null,
    names.has("deepresearch-report.html")
      ? h(
          "a",
          {
            class: "btn btn-small btn-quiet",
            href: urls.report(runId, "html"),
            target: "_blank",
            rel: "noopener",
          },
          "Open as a page",
        )
      : null,
    said,
  );
}

async function copyMarkdown(runId, said) {
  try {
    const text = await api.reportMarkdown(runId);
    await navigator.clipboard.writeText(text);
    setText(said, "Copied.");
  } catch (error) {
    setText(said, `Could not copy: ${error.message}`);
  }
}
