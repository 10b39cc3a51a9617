// The run page's header: engine tag, model quality note, action buttons and usage facts (DOM only).

import { $, between, compact, duration, fill, h, setText, usd } from "../core/dom.js";
import { isActive } from "./model/selectors.js";

/** @param {string|null} engine @param {{model: string, structured_output: string|null}|null} [llm] */
export function renderEngine(engine, llm) {
  const tag = $("run-engine");
  tag.dataset.engine = engine || "";
  setText(
    tag,
    engine === "extractive" ? "Extractive mode · no language model" : engine === "llm" ? "LLM engine" : "",
  );
  // how the server takes structured output, as negotiated with it (null until the first model call)
  tag.title =
    engine === "llm" && llm
      ? `${llm.model}; structured output: ${llm.structured_output || "not negotiated yet"}`
      : "";
}

/**
 * What the model did, said plainly, but only when a step could not use its answer: how many answers were
 * unusable and which steps used their extractive method (each reason is on its call in the timeline).
 */
export function renderModelQuality(model) {
  const box = $("run-model");
  const u = model.usage;
  const fallbacks = u.fallbacks || [];
  const text = fallbacks.length
    ? `Model: ${plural(u.model_answers, "answer")}, ${u.unusable_answers} unusable — ` +
      `${plural(fallbacks.length, "step")} used the extractive method: ` +
      `${fallbacks.map((f) => f.step).join(", ")}. Each reason is on its call in the activity.`
    : "";
  if (box.textContent !== text) setText(box, text);
  box.hidden = !text;
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

export function renderActions(model, pausing) {
  const pauseButton = /** @type {HTMLButtonElement} */ ($("btn-pause"));
  const continueButton = /** @type {HTMLButtonElement} */ ($("btn-continue"));
  const stopped = ["cancelled", "interrupted", "failed"].includes(model.status);
  pauseButton.hidden = !isActive(model);
  pauseButton.disabled = pausing || model.status === "queued";
  setText(pauseButton, pausing ? "Pausing…" : "Pause");
  // one way to continue; another checkpoint is the second choice, never a second "continue"
  continueButton.hidden = !stopped || Boolean(model.planRejected); // continuing would reject it again
  setText(continueButton, model.budgetStop ? "Raise the limit and continue…" : "Continue");
  setText(
    $("btn-checkpoints"),
    model.status === "completed"
      ? "Fork from a checkpoint"
      : stopped
        ? "From another checkpoint…"
        : "Checkpoints",
  );
}

export function renderUsage(model) {
  const u = model.usage;
  const elapsed = elapsedMs(model);
  const facts = [
    [
      "Tokens",
      u.tokens ? compact(u.tokens) : "0",
      u.tokens_saved ? `${compact(u.tokens_saved)} saved by receipts` : null,
    ],
    ["Cost", u.cost_usd ? usd(u.cost_usd) : model.engine === "extractive" ? "$0" : "not priced", null],
    ["Calls", String(u.calls), u.reused_calls ? `${u.reused_calls} from receipts` : null],
    ["Time", elapsed ? duration(elapsed) : "–", null],
  ];
  const key = JSON.stringify(facts);
  const dl = $("run-usage");
  if (dl.dataset.key === key) return;
  dl.dataset.key = key;
  fill(
    dl,
    ...facts.map(([term, value, note]) =>
      h(
        "div",
        { class: "fact" },
        h("dt", {}, term),
        h("dd", {}, value, note ? h("span", { class: "muted" }, ` (${note})`) : null),
      ),
    ),
  );
}

/** Time spent running, summed over every execution (start, continues, forks). */
function elapsedMs(model) {
  let total = 0;
  let open = null;
  for (const item of model.items) {
    if (item.kind === "segment") open = item.ts;
    else if (item.kind === "end" && open) {
      total += Math.max(0, between(open, item.ts));
      open = null;
    }
  }
  if (open)
    total += Math.max(0, (isActive(model) ? Date.now() : Date.parse(model.lastTs)) - Date.parse(open));
  return total;
}

/**
 * Where a fork or a follow-up came from, with a link to that run (it stays as it was).
 * @param {{forked_from?: {run_id: string}|null, follow_up_of?: string|null}|null} detail
 */
export function renderLineage(detail) {
  const box = $("run-lineage");
  const parent = detail?.forked_from?.run_id || detail?.follow_up_of || null;
  const key = parent ? `${detail?.forked_from ? "fork" : "follow-up"}|${parent}` : "";
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.hidden = !parent;
  if (!parent) return box.replaceChildren();
  fill(
    box,
    detail.forked_from ? "A fork of " : "A follow-up of ",
    h("a", { href: `#run=${encodeURIComponent(parent)}`, id: "run-parent" }, "this run"),
  );
}
