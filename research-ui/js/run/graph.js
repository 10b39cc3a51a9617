// The small diagram of the research graph: the server's business stages plus the reflection loop, lit up
// as they run. Built once as SVG; each render only changes classes and captions.

import { s, setText } from "../core/dom.js";
import { NODES } from "../core/nodes.js";
import { criticEnabled, nodeStates, rounds } from "./model/selectors.js";

const WIDTH = 716;
const NODE_W = 78;
const NODE_H = 34;
const Y = 62;

/** Left edge of each of `count` nodes spread over the width. */
function columns(count) {
  const gap = (WIDTH - 8 - count * NODE_W) / Math.max(1, count - 1);
  return (i) => 4 + i * (NODE_W + gap);
}

const STATUS_WORD = {
  pending: "",
  running: "running…",
  done: "done",
  failed: "failed",
  stopped: "paused",
  skipped: "off",
};

export class GraphView {
  /** @param {HTMLElement} figure @param {HTMLElement} caption */
  constructor(figure, caption) {
    this.caption = caption;
    this.nodes = new Map();
    // the server's stages (setStages) are known by now: the view is built after config.json
    const x = columns(NODES.length);
    this.x = x;
    const search = NODES.findIndex((n) => n.key === "search_web");
    const reflect = NODES.findIndex((n) => n.key === "reflection");
    const loopFrom = x(reflect) + NODE_W / 2;
    const loopTo = x(search) + NODE_W / 2;
    this.loopLabel = s("text", {
      class: "g-loop-label",
      x: (loopFrom + loopTo) / 2,
      y: 14,
      "text-anchor": "middle",
    });
    this.loop = s("path", {
      class: "g-loop",
      d: `M ${loopFrom} ${Y - NODE_H / 2} C ${loopFrom} ${Y - 52}, ${loopTo} ${Y - 52}, ${loopTo} ${Y - NODE_H / 2 - 3}`,
      "marker-end": "url(#g-arrow-loop)",
    });
    const svg = s(
      "svg",
      { viewBox: `0 0 ${WIDTH} 112`, role: "img", "aria-labelledby": caption.id, class: "g-svg" },
      s(
        "defs",
        {},
        marker("g-arrow", "g-arrow-head"),
        marker("g-arrow-loop", "g-arrow-head g-arrow-head-loop"),
      ),
      NODES.slice(1).map((_, i) =>
        s("line", {
          class: "g-edge",
          x1: x(i) + NODE_W,
          y1: Y,
          x2: x(i + 1) - 3,
          y2: Y,
          "marker-end": "url(#g-arrow)",
        }),
      ),
      this.loop,
      this.loopLabel,
      NODES.map((node, i) => this.node(node, i)),
    );
    figure.prepend(svg);
  }

  node(node, i) {
    const x = this.x;
    const label = s(
      "text",
      { class: "g-label", x: x(i) + NODE_W / 2, y: Y + 4.5, "text-anchor": "middle" },
      node.short,
    );
    const note = s("text", {
      class: "g-note",
      x: x(i) + NODE_W / 2,
      y: Y + NODE_H / 2 + 17,
      "text-anchor": "middle",
    });
    const group = s(
      "g",
      { class: "g-node", "data-node": node.key, "data-status": "pending" },
      s("rect", { class: "g-box", x: x(i), y: Y - NODE_H / 2, width: NODE_W, height: NODE_H, rx: 9 }),
      label,
      note,
      s("title", {}, node.title),
    );
    this.nodes.set(node.key, { group, note });
    return group;
  }

  /** @param {ReturnType<import("./model/events.js").createModel>} model */
  render(model) {
    const states = nodeStates(model);
    const spoken = [];
    for (const node of NODES) {
      const state = states.get(node.key);
      const view = this.nodes.get(node.key);
      view.group.dataset.status = state.status;
      const note = caption(node.key, state, model);
      setText(view.note, note);
      spoken.push(`${node.title}: ${note || "not started"}`);
    }
    const n = rounds(model);
    const max = model.options?.max_research_loops;
    const looped = n > 1;
    this.loop.classList.toggle("is-active", looped);
    const upTo = max === 1 ? "one search round" : `up to ${max} search rounds`;
    setText(this.loopLabel, n ? `round ${n}${max ? ` of ${max}` : ""}` : max ? upTo : "");
    setText(this.caption, `Research graph. ${spoken.join("; ")}. ${n ? `Search round ${n}.` : ""}`);
    if (!criticEnabled(model)) this.nodes.get("critic_review").group.dataset.status = "skipped";
  }
}

function marker(id, cls) {
  return s(
    "marker",
    {
      id,
      viewBox: "0 0 10 10",
      refX: 8,
      refY: 5,
      markerWidth: 7,
      markerHeight: 7,
      orient: "auto-start-reverse",
    },
    s("path", { class: cls, d: "M 0 0 L 10 5 L 0 10 z" }),
  );
}

/** A few characters under each node: counts while running, the outcome after. */
function caption(key, state, model) {
  const attempt = state.attempt;
  if (state.status === "skipped") return "off";
  if (!attempt || state.status === "pending") return "";
  const calls = attempt.calls.map((id) => model.calls.get(id)).filter(Boolean);
  const finished = (kind) => calls.filter((c) => c.kind === kind && c.status !== "running").length;
  const total = (kind) => calls.filter((c) => c.kind === kind).length;
  if (state.status !== "done" && state.status !== "running") return STATUS_WORD[state.status] || state.status;
  switch (key) {
    case "search_web":
      return total("search") ? `${finished("search")}/${total("search")} queries` : STATUS_WORD[state.status];
    case "fetch_sources": {
      const ok = calls.filter(
        (c) => c.kind === "fetch" && (c.status === "ok" || c.status === "reused"),
      ).length;
      return total("fetch") ? `${ok}/${total("fetch")} fetched` : STATUS_WORD[state.status];
    }
    case "screen_evidence": {
      const kept = /(\d+) passages kept/.exec(attempt.summary || "");
      return kept ? `${kept[1]} kept` : STATUS_WORD[state.status];
    }
    case "reflection":
      if (state.status === "running") return "judging…";
      return attempt.loopAgain ? "search again" : "enough";
    case "analyze_findings":
      return total("llm") ? `${finished("llm")}/${total("llm")} reviewers` : STATUS_WORD[state.status];
    case "write_report": {
      const cited = /(\d+)\/(\d+) citations supported/.exec(attempt.summary || "");
      return cited ? `${cited[1]}/${cited[2]} cited ✓` : STATUS_WORD[state.status];
    }
    default:
      return STATUS_WORD[state.status];
  }
}
