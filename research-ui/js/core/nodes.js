// The graph's nodes as the server describes them (config.json `stages`) and the run statuses: tables
// every view reads, filled once at boot.

/**
 * A node of the graph as the server describes it (config.json `stages`).
 * @typedef {{key: string, title: string, short: string, description: string, headline: string,
 *   business: boolean, artifacts: string[]}} Stage
 */

/** The graph's nodes in order (the business stages plus the reflection loop); filled by setStages. */
export const NODES = /** @type {Stage[]} */ ([]);
export const NODE_BY_KEY = /** @type {Map<string, Stage>} */ (new Map());
export const BUSINESS_STAGES = /** @type {Set<string>} */ (new Set());
export const ORDER = /** @type {Map<string, number>} */ (new Map());

/**
 * Take the server's stages. The tables above are filled in place, so every module that imported them sees
 * the server's list: call it once at boot, before any view or model is built.
 * @param {Stage[]} stages
 */
export function setStages(stages) {
  NODES.splice(0, NODES.length, ...stages);
  NODE_BY_KEY.clear();
  BUSINESS_STAGES.clear();
  ORDER.clear();
  stages.forEach((node, i) => {
    NODE_BY_KEY.set(node.key, node);
    ORDER.set(node.key, i);
    if (node.business) BUSINESS_STAGES.add(node.key);
  });
}

/** The files a stage writes into the run's workspace (the server's list; none for the reflection loop). */
export function stageArtifacts(key) {
  return NODE_BY_KEY.get(key)?.artifacts || [];
}

export const ACTIVE = new Set(["queued", "running"]);
export const STATUS_LABEL = {
  queued: "Queued",
  running: "Running",
  cancelled: "Paused",
  interrupted: "Interrupted",
  failed: "Failed",
  completed: "Completed",
  waiting_for_input: "Waiting for you",
};

/** A run that ended because its plan was rejected (the server's reason starts so, nodes/review.py). */
export function planRejection(status, error) {
  return status === "cancelled" && /^plan rejected/i.test(error || "") ? error : null;
}

/** The status in words; a rejected plan is not a pause (continuing would reject it again). */
export function statusLabel(status, error = null) {
  return planRejection(status, error) ? "Plan rejected" : STATUS_LABEL[status] || status;
}
