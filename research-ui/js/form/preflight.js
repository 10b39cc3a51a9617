// Before a run starts: what this server can reach right now (GET /api/providers/health), said in plain
// words in the form. The check never blocks a start: when it fails or is slow, the form works as before.

import { api } from "../core/api.js";
import { fill, h } from "../core/dom.js";

/** How long an answer stays good: the probes take up to a few seconds and the network rarely changes. */
const FRESH_MS = 60_000;

/** @type {{at: number, promise: Promise<any>}|null} */
let cached = null;

/**
 * The providers' health, asked at most once a minute (a failed check counts as an answer: null).
 * @returns {Promise<any|null>}
 */
export function providersHealth() {
  const now = Date.now();
  if (cached && now - cached.at < FRESH_MS) return cached.promise;
  const promise = api.providersHealth().catch(() => null);
  cached = { at: now, promise };
  return promise;
}

/** Forget the last answer (signed out: the next user asks again). */
export function forgetHealth() {
  cached = null;
}

/**
 * The notice above the estimate: no reachable web search (with "Search only my documents"), a model the
 * server cannot use. Empty and hidden when all is well or when nothing is known.
 * @param {HTMLElement} box
 * @param {any|null} health the route's answer
 * @param {{documentsOnly: boolean, collections: number, onDocumentsOnly: () => void}} form
 */
export function renderPreflight(box, health, form) {
  const parts = [];
  const web = health?.web_search;
  if ((web === "unreachable" || web === "not_configured") && !form.documentsOnly) {
    parts.push(webProblem(health, form));
  }
  const llm = health?.llm;
  if (llm && llm.status !== "ok") {
    parts.push(
      h(
        "div",
        { class: "preflight-part", "data-problem": "model" },
        h(
          "p",
          {},
          h("strong", {}, "The model cannot be used right now. "),
          llm.message,
          " A run started now would fail at its first model call.",
        ),
        llm.detail ? folded("What the model server answered", llm.detail) : null,
      ),
    );
  }
  fill(box, ...parts);
  box.hidden = parts.length === 0;
}

function webProblem(health, form) {
  const configured = (health.search || []).filter((p) => p.configured);
  const what =
    health.web_search === "not_configured"
      ? "No web search provider is configured on this server, so a run cannot search the web."
      : `No web search provider is reachable from this server: ${configured
          .map((p) => p.name)
          .join(", ")} could not be reached, so a run cannot search the web.`;
  const action = form.collections
    ? h(
        "button",
        {
          type: "button",
          class: "btn btn-small",
          id: "preflight-documents-only",
          on: { click: () => form.onDocumentsOnly() },
        },
        "Search only my documents",
      )
    : h("a", { class: "btn btn-small", href: "#documents" }, "Upload documents to search them");
  return h(
    "div",
    { class: "preflight-part", "data-problem": "web" },
    h("p", {}, h("strong", {}, what)),
    h(
      "p",
      {},
      form.collections
        ? "Search only your documents instead, or ask the operator to configure SEARXNG_URL, TAVILY_API_KEY or BRAVE_API_KEY."
        : "Upload documents and search only them, or ask the operator to configure SEARXNG_URL, TAVILY_API_KEY or BRAVE_API_KEY.",
    ),
    h("div", { class: "preflight-actions" }, action),
    configured.length
      ? folded(
          "What the server tried",
          configured.map((p) => `${p.name}: ${p.detail}`),
        )
      : null,
  );
}

/** The raw detail, folded away. @param {string} label @param {string|string[]} lines */
function folded(label, lines) {
  return h(
    "details",
    { class: "preflight-detail" },
    h("summary", {}, label),
    h("pre", {}, [lines].flat().join("\n")),
  );
}
