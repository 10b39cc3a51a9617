// What one sub-tool call did, opened from its row in the activity: what a query returned (the run's
// search-results.json), where a fetch ended (sources-fetched.json: the final URL after redirects, the title,
// the size), what a model call cost and why a step fell back. Errors are said in plain words first; the
// technical text is folded away under "Technical detail".

import { bytes, compact, domainOf, duration, h, isWebUrl, plainWords } from "../core/dom.js";

/**
 * @typedef {{search?: any, fetched?: any}} CallFiles the run's files the details read (any may be missing)
 */

/**
 * @param {import("./model/event-calls.js").Call} call
 * @param {CallFiles} files
 * @returns {HTMLElement}
 */
export function callDetails(call, files) {
  const parts =
    call.kind === "search"
      ? searchDetails(call, files)
      : call.kind === "fetch"
        ? fetchDetails(call, files)
        : call.kind === "llm"
          ? llmDetails(call)
          : [fact("File", call.target), fact("Size", bytes(call.bytes))];
  if (call.status === "failed" && call.error) parts.push(technical(call.error));
  return h("div", { class: "call-more" }, ...parts);
}

function searchDetails(call, files) {
  const results = (files.search?.results || []).filter((r) => (r.queries || []).includes(call.target));
  const out = [fact("Query", call.target)];
  if (call.status === "running") return [...out, h("p", { class: "muted" }, "Still searching…")];
  if (!files.search) {
    out.push(h("p", { class: "muted" }, `${call.results ?? 0} results; the list is written when the round ends.`));
    return out;
  }
  if (!results.length) out.push(h("p", { class: "muted" }, "This query returned nothing."));
  else {
    out.push(
      h(
        "ol",
        { class: "call-results" },
        results
          .sort((a, b) => (a.rank || 0) - (b.rank || 0))
          .map((r) =>
            h(
              "li",
              {},
              isWebUrl(r.url)
                ? h("a", { href: r.url, target: "_blank", rel: "noopener noreferrer", text: r.title || r.url })
                : h("span", { text: r.title || r.url }),
              h("span", { class: "muted", text: ` · ${domainOf(r.url)}${r.provider ? ` · ${r.provider}` : ""}` }),
              r.snippet ? h("span", { class: "call-snippet", text: r.snippet }) : null,
            ),
          ),
      ),
    );
  }
  const failures = Object.entries(call.failures || {}).map(([provider, error]) => `${provider}: ${error}`);
  for (const failure of failures) {
    out.push(h("p", { class: "call-problem" }, "A search provider failed: ", technical(describe(failure))));
  }
  return out;
}

function fetchDetails(call, files) {
  const source = (files.fetched?.sources || []).find((s) => s.url === call.target);
  const failure = (files.fetched?.failures || []).find((f) => f.url === call.target);
  const out = [fact("Asked for", call.target)];
  if (call.status === "running") return [...out, h("p", { class: "muted" }, "Still reading…")];
  if (source) {
    const moved = source.final_url && source.final_url !== source.url;
    out.push(fact("Ended at", moved ? source.final_url : `${source.final_url || source.url} (no redirect)`));
    out.push(fact("Title", source.title));
    out.push(
      fact(
        "Read",
        [bytes(source.bytes), source.chars ? `${compact(source.chars)} characters of text` : null]
          .filter(Boolean)
          .join(" · "),
      ),
    );
    if (source.n) out.push(fact("Source", `[${source.n}] in the sources list`));
  } else if (call.status === "failed" || failure) {
    out.push(h("p", { class: "call-problem" }, "It could not be read, so the run went on without it."));
  } else {
    out.push(fact("Title", call.title), fact("Read", bytes(call.bytes)));
  }
  return out;
}

function llmDetails(call) {
  const out = [
    fact("Step", call.target),
    fact("Tokens", call.reused ? `${compact(call.tokens)} (answered from its receipt)` : compact(call.tokens)),
  ];
  if (call.durationMs !== undefined) out.push(fact("Took", duration(call.durationMs)));
  if (call.fallback) {
    out.push(
      h("p", { class: "call-problem" }, "The model's answer was unusable, so the step used its extractive method."),
      technical(call.fallback.reason),
    );
  }
  return out;
}

function fact(term, value) {
  if (value === undefined || value === null || value === "") return null;
  return h("p", { class: "call-fact" }, h("span", { class: "muted", text: `${term}: ` }), String(value));
}

/** The technical text of a problem, folded away: the plain words come first. */
export function technical(text) {
  return h(
    "details",
    { class: "technical" },
    h("summary", {}, "Technical detail"),
    h("pre", { class: "technical-text", text: String(text) }),
  );
}

function describe(failure) {
  if (typeof failure === "string") return failure;
  return JSON.stringify(failure);
}

/**
 * An error said in plain words (dom.js plainWords, cut at a word), and the whole text as its technical
 * detail when that says more.
 * @param {string} text
 * @returns {{plain: string, detail: HTMLElement|null}}
 */
export function plainError(text) {
  const full = String(text || "").trim();
  let plain = plainWords(full);
  const cut = plain.length > 160;
  if (cut) plain = `${plain.slice(0, 160).replace(/\s+\S*$/, "")}…`;
  const more = cut || plain.toLowerCase() !== full.replace(/\.$/, "").toLowerCase();
  return { plain: plain || "Something went wrong", detail: more ? technical(full) : null };
}
