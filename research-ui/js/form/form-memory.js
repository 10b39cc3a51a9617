// What the last start used, for the next form (this browser only, forgotten at sign-out): the shape of the
// run (plan review included), its collection and "only my documents". Applied over the server's defaults; a remembered number the
// server's bounds no longer allow is left at the default, never changed to fit.

import { numberProblem } from "../core/validate.js";

const REMEMBERED = "deepresearch.last-form";

/** @returns {any|null} */
function remembered() {
  try {
    const value = JSON.parse(localStorage.getItem(REMEMBERED) || "null");
    return value && typeof value === "object" ? value : null;
  } catch {
    return null; // storage off, or a value this version cannot read: the server's defaults
  }
}

/**
 * @param {any} defaults the server's default options
 * @param {Record<string, any>} limits the server's bounds
 * @param {string[]} numbers the numeric shape options
 * @returns {{options: any, corpus: {corpus: string, only: boolean}|null}} the options, and the collection
 *   to choose once the session says it is offered
 */
export function withRemembered(defaults, limits, numbers) {
  const last = remembered();
  // the workbench reviews the plan unless this browser last chose not to (the API's default is off)
  const reviewPlan = typeof last?.shape?.review_plan === "boolean" ? last.shape.review_plan : true;
  if (!last?.shape) return { options: { ...defaults, review_plan: reviewPlan }, corpus: null };
  const options = { ...defaults, review_plan: reviewPlan };
  for (const name of numbers) {
    const value = last.shape[name];
    if (value !== undefined && !numberProblem(String(value), limits[name], { label: name })) {
      options[name] = value;
    }
  }
  if (Array.isArray(last.shape.reviewers) && last.shape.reviewers.length) {
    options.reviewers = last.shape.reviewers;
  }
  if (typeof last.shape.requires_critic_review === "boolean") {
    options.requires_critic_review = last.shape.requires_critic_review;
  }
  const corpus = last.corpus ? { corpus: String(last.corpus), only: Boolean(last.corpus_only) } : null;
  return { options, corpus };
}

/** Remember a start's options. */
export function remember(options, numbers) {
  const shape = Object.fromEntries(numbers.map((name) => [name, options[name]]));
  shape.reviewers = options.reviewers;
  shape.requires_critic_review = options.requires_critic_review;
  shape.review_plan = options.review_plan;
  try {
    localStorage.setItem(
      REMEMBERED,
      JSON.stringify({ shape, corpus: options.corpus, corpus_only: options.corpus_only }),
    );
  } catch {
    /* storage off: the next form starts from the server's defaults */
  }
}

export function forgetRemembered() {
  try {
    localStorage.removeItem(REMEMBERED);
  } catch {
    /* nothing stored */
  }
}
