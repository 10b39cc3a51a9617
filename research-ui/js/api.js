// The runner's HTTP API (runner.py). Every call returns parsed JSON or throws an ApiError with the
// server's own message, so the UI can show it where the action happened.

export class ApiError extends Error {
  /**
   * @param {string} message
   * @param {number} status  HTTP status (0: the server could not be reached)
   */
  constructor(message, status) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

/** FastAPI's `detail`: a string, or a list of validation errors. */
function detailText(body) {
  const detail = body?.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail.map((e) => `${(e.loc || []).filter((p) => p !== "body").join(".")}: ${e.msg}`).join("; ");
  }
  return "";
}

/** @type {(error: ApiError) => void} */
let onUnauthorised = () => {};

/**
 * Called with every 401 of a call made with a session (the token was revoked, or the session cookie is
 * gone): the app asks for a token again. Sign-in calls handle their own 401.
 * @param {(error: ApiError) => void} handler
 */
export function setUnauthorisedHandler(handler) {
  onUnauthorised = handler;
}

/** A 401 leaves the call rejected as usual, after the app was told. */
function failed(error, { signIn = false } = {}) {
  if (error.status === 401 && !signIn) onUnauthorised(error);
  return error;
}

async function request(method, path, body, { signIn = false } = {}) {
  /** @type {RequestInit} */
  const init = { method, headers: { Accept: "application/json" } };
  // The server refuses a POST that another web page could forge (a form): this header marks ours.
  if (method !== "GET") init.headers["X-Requested-With"] = "deepresearch-workbench";
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError("The server cannot be reached. Check that the runner is up.", 0);
  }
  const text = await response.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const message = detailText(parsed) || `${response.status} ${response.statusText}`;
    throw failed(new ApiError(message, response.status), { signIn });
  }
  return parsed;
}

async function requestText(path) {
  let response;
  try {
    response = await fetch(path);
  } catch {
    throw new ApiError("The server cannot be reached.", 0);
  }
  if (!response.ok) throw failed(new ApiError(`${response.status} ${response.statusText}`, response.status));
  return response.text();
}

const enc = encodeURIComponent;
const runPath = (id) => `/api/runs/${enc(id)}`;
/** Artifact paths keep their slashes; each segment is encoded. */
const artifactPath = (id, path) => `${runPath(id)}/artifacts/${path.split("/").map(enc).join("/")}`;

export const api = {
  config: () => request("GET", "/research/config.json"),
  // The token travels once, in this JSON body; the server keeps it in an HttpOnly cookie (path /api), so
  // no script, URL or storage ever holds it.
  session: () => request("GET", "/api/session", undefined, { signIn: true }),
  signIn: (token) => request("POST", "/api/session", { token }, { signIn: true }),
  signOut: () => request("DELETE", "/api/session", undefined, { signIn: true }),
  listRuns: ({ status = "", limit = 30, offset = 0 } = {}) => {
    const query = new URLSearchParams({ limit: String(limit), offset: String(offset) });
    if (status) query.set("status", status);
    return request("GET", `/api/runs?${query}`);
  },
  getRun: (id) => request("GET", runPath(id)),
  createRun: (question, options) => request("POST", "/api/runs", { question, options }),
  cancel: (id) => request("POST", `${runPath(id)}/cancel`),
  /** @param {string} id @param {string|null} checkpointId null: the latest checkpoint */
  /**
   * @param {string} id
   * @param {string|null} checkpointId null: the latest checkpoint
   * @param {object} [options] e.g. {budget: {...}} to raise a limit the run reached
   */
  resume: (id, checkpointId, options) =>
    request("POST", `${runPath(id)}/resume`, {
      ...(checkpointId ? { checkpoint_id: checkpointId } : {}),
      ...(options ? { options } : {}),
    }),
  checkpoints: (id) => request("GET", `${runPath(id)}/checkpoints`),
  preview: (id, checkpointId) => request("GET", `${runPath(id)}/checkpoints/${enc(checkpointId)}/preview`),
  artifacts: (id) => request("GET", `${runPath(id)}/artifacts`),
  artifactJson: (id, path) => request("GET", artifactPath(id, path)),
  artifactText: (id, path) => requestText(artifactPath(id, path)),
  reportHtml: (id) => requestText(`${runPath(id)}/report?format=html`),
};

export const urls = {
  events: (id, after) => `${runPath(id)}/events${after ? `?after=${after}` : ""}`,
  artifact: artifactPath,
  report: (id, format) => `${runPath(id)}/report?format=${format}`,
};
