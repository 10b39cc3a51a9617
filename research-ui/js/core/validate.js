// Checking what the user typed against the server's own bounds (config.json `limits`, the JSON Schema
// keywords of ResearchOptions and RunBudget in config.py): a value out of range is shown as an error next to
// its field and nothing starts. Nothing is ever changed silently to fit.

import { h } from "./dom.js";

/**
 * What is wrong with a whole-number field's text, or null when it is fine (or empty where empty is allowed).
 * @param {string} raw the input's text
 * @param {{minimum?: number, exclusiveMinimum?: number, maximum?: number}|undefined} limit
 * @param {{label: string, optional?: boolean}} how
 * @returns {string|null}
 */
export function numberProblem(raw, limit = {}, { label, optional = false }) {
  const text = raw.trim();
  if (text === "") return optional ? null : `${label}: enter a number.`;
  const value = Number(text);
  if (!Number.isFinite(value)) return `${label}: “${text}” is not a number.`;
  if (!Number.isInteger(value)) return `${label} must be a whole number (you entered ${text}).`;
  const low = limit.minimum;
  const above = limit.exclusiveMinimum;
  const high = limit.maximum;
  const range =
    low !== undefined && high !== undefined
      ? `between ${low} and ${high}`
      : low !== undefined
        ? `at least ${low}`
        : above !== undefined
          ? `more than ${above}`
          : high !== undefined
            ? `at most ${high}`
            : "";
  const tooLow = (low !== undefined && value < low) || (above !== undefined && value <= above);
  const tooHigh = high !== undefined && value > high;
  if (tooLow || tooHigh) return `${label} must be ${range} on this server (you entered ${text}).`;
  return null;
}

/**
 * The field's own error line (created once, under the input; the input points to it with
 * aria-describedby), showing `problem` or hidden.
 * @param {HTMLInputElement} input
 * @param {string|null} problem
 */
export function showFieldProblem(input, problem) {
  const id = `${input.id}-error`;
  let line = document.getElementById(id);
  if (!line) {
    line = h("p", { class: "field-error", id, hidden: true });
    input.insertAdjacentElement("afterend", line);
    const described = input.getAttribute("aria-describedby");
    input.setAttribute("aria-describedby", described ? `${described} ${id}` : id);
  }
  line.textContent = problem || "";
  line.hidden = !problem;
  if (problem) input.setAttribute("aria-invalid", "true");
  else input.removeAttribute("aria-invalid");
}

/** A field's name as its label says it ("Depth"), without the hint after it. */
export function labelOf(input) {
  const label = document.querySelector(`label[for="${input.id}"]`);
  const first = label?.firstChild;
  return (first?.textContent || input.name).trim();
}
