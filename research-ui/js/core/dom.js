// Small DOM and formatting helpers. Text always goes in as text nodes: nothing here parses HTML.

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * Create an element. `attrs`: `class`, `text`, `dataset` (object), `on` (event → handler), booleans
 * (`hidden`, `disabled`, …) and any other attribute (strings). Children: nodes, strings, or null (skipped).
 * @param {string} tag
 * @param {Record<string, any>} [attrs]
 * @param {...(Node|string|null|undefined|false)} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** Same as h() for SVG elements. */
export function s(tag, attrs = {}, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

function build(el, attrs, children) {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") el.setAttribute("class", value);
    else if (name === "text") el.textContent = String(value);
    else if (name === "dataset") Object.assign(el.dataset, value);
    else if (name === "on") for (const [type, fn] of Object.entries(value)) el.addEventListener(type, fn);
    else if (value === true) el.setAttribute(name, "");
    else el.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replace an element's children; null, undefined and false are skipped (DOM would print "null"). */
export function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

/** @param {string} id */
export function $(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from index.html`);
  return el;
}

/** Set text only when it changed (keeps screen readers and selections calm). */
export function setText(el, text) {
  const value = text ?? "";
  if (el.textContent !== value) el.textContent = value;
}

// --- formatting ----------------------------------------------------------------------------------
const numberFormat = new Intl.NumberFormat(undefined);

export function count(n) {
  return numberFormat.format(n || 0);
}

/** 14922 → "14.9k" */
export function compact(n) {
  const value = n || 0;
  if (value < 1000) return String(value);
  if (value < 1_000_000) return `${(value / 1000).toFixed(value < 10_000 ? 1 : 0)}k`;
  return `${(value / 1_000_000).toFixed(1)}M`;
}

// decimal units, as the server's limits are set (DEEPRESEARCH_MAX_UPLOAD_BYTES=20000000 reads "20 MB", the
// 1 GB storage quota "1 GB"): binary units showed them as "19.1 MB" and "953.7 MB"
const BYTE_UNITS = [["GB", 1e9], ["MB", 1e6], ["kB", 1e3]];

export function bytes(n) {
  if (n === undefined || n === null) return "";
  for (const [unit, size] of BYTE_UNITS) {
    if (n >= size) {
      const value = n / size;
      return `${value < 10 ? Number(value.toFixed(1)) : Math.round(value)} ${unit}`;
    }
  }
  return `${n} B`;
}

export function usd(value) {
  if (!value) return "$0";
  if (value < 0.01) return `$${value.toFixed(4)}`;
  return `$${value.toFixed(2)}`;
}

export function duration(ms) {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** Milliseconds between two ISO timestamps (or NaN). */
export function between(startIso, endIso) {
  return Date.parse(endIso) - Date.parse(startIso);
}

export function clock(iso) {
  if (!iso) return "";
  return new Date(iso).toLocaleTimeString(undefined, {
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
}

/** "just now", "5 min ago", "yesterday 14:02", "3 Mar" */
export function ago(iso, now = Date.now()) {
  if (!iso) return "";
  const then = new Date(iso);
  const seconds = Math.round((now - then.getTime()) / 1000);
  if (seconds < 45) return "just now";
  if (seconds < 3600) return `${Math.max(1, Math.round(seconds / 60))} min ago`;
  if (seconds < 6 * 3600) return `${Math.round(seconds / 3600)} h ago`;
  const time = then.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  const today = new Date(now);
  if (then.toDateString() === today.toDateString()) return `today ${time}`;
  const yesterday = new Date(now - 86_400_000);
  if (then.toDateString() === yesterday.toDateString()) return `yesterday ${time}`;
  return then.toLocaleDateString(undefined, { day: "numeric", month: "short" });
}

export function plural(n, one, many = `${one}s`) {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** Hostname of a URL, "local document" for corpus:// ones. */
export function domainOf(url) {
  if (!url) return "";
  if (url.startsWith("corpus://")) return "local document";
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}

/** Only http(s) URLs become links. */
export function isWebUrl(url) {
  return typeof url === "string" && /^https?:\/\//i.test(url);
}

/** "2 Nov 2023" from a day or a timestamp ("" when there is none or it is not a date). */
export function day(iso) {
  if (!iso) return "";
  const text = String(iso);
  // a bare day is that day everywhere (Date would read it as UTC midnight and shift it west of Greenwich)
  const bare = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const date = bare ? new Date(Number(bare[1]), Number(bare[2]) - 1, Number(bare[3])) : new Date(text);
  if (Number.isNaN(date.getTime())) return "";
  return date.toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" });
}

/** "1 Dec 2026, 14:02": an absolute time for lists a person comes back to. */
export function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  return date.toLocaleString(undefined, {
    day: "numeric",
    month: "short",
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
  });
}

/** How a source's date reads: a web page's is when it was published, a local document's when it changed. */
export function sourceDate(row) {
  const text = day(row.published);
  if (!text) return "";
  return row.extractor === "corpus" || String(row.url || "").startsWith("corpus://")
    ? `file changed ${text}`
    : `published ${text}`;
}

/**
 * A message in plain words: its first line, without an exception's class name or a stage's key in front,
 * without the option path a budget stop names (the view offers the field), capitalised.
 */
export function plainWords(text) {
  let plain = String(text || "")
    .trim()
    .split("\n")[0]
    .replace(/^([A-Za-z_.]*(Error|Exception|Failure)|[a-z]+(_[a-z]+)+|budget):\s*/, "")
    .replace(/;\s*resume with a higher options\.budget\.\w+\.?$/, "");
  plain = plain.replace(/\.$/, "");
  return plain ? plain[0].toUpperCase() + plain.slice(1) : "";
}
