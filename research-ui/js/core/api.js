// The runner's HTTP API (runner.py). Every call returns parsed JSON or throws an ApiError with the
// server's own message, so the UI can show it where the action happened.

export class ApiError extends Error {
  /**
   * @param {string} message
   * @param {number} status  HTTP status (0: the server could not be reached)
   * @param {{loc: (string|number)[], msg: string}[]} [errors] the fields the server refused, if it named them
   */
  constructor(message, status, errors = []) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.errors = errors;
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

/** The server refuses a write that another web page could forge (a form): this header marks ours. */
const WRITE_HEADER = ["X-Requested-With", "deepresearch-workbench"];

/** A response's JSON (null when empty), or the ApiError carrying the server's message. */
function outcome(status, statusText, text, { signIn = false } = {}) {
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (status >= 200 && status < 300) return parsed;
  const message = detailText(parsed) || `${status} ${statusText}`;
  const errors = Array.isArray(parsed?.errors) ? parsed.errors : [];
  throw failed(new ApiError(message, status, errors), { signIn });
}

async function request(method, path, body, { signIn = false } = {}) {
  /** @type {RequestInit} */
  const init = { method, headers: { Accept: "application/json" } };
  if (method !== "GET") init.headers[WRITE_HEADER[0]] = WRITE_HEADER[1];
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
  return outcome(response.status, response.statusText, await response.text(), { signIn });
}

/**
 * PUT one file's bytes as they are (not multipart), with its media type. XMLHttpRequest, not fetch: only
 * it reports how much of the body has been sent.
 * @param {string} path
 * @param {File} file
 * @param {(fraction: number) => void} onProgress
 */
function upload(path, file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", path);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.setRequestHeader(...WRITE_HEADER);
    // the browser's type for the name's extension; the server checks that it fits and says why not
    xhr.setRequestHeader("Content-Type", file.type || "application/octet-stream");
    xhr.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable && event.total) onProgress(event.loaded / event.total);
    });
    xhr.addEventListener("load", () => {
      try {
        resolve(outcome(xhr.status, xhr.statusText, xhr.responseText));
      } catch (error) {
        reject(error);
      }
    });
    const unreachable = () =>
      reject(
        new ApiError("The upload was cut off: the server could not be reached or closed the connection.", 0),
      );
    xhr.addEventListener("error", unreachable);
    xhr.addEventListener("abort", unreachable);
    xhr.send(file);
  });
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
const documentsPath = (name) => `/api/collections/${enc(name)}/documents`;
/** Artifact paths keep their slashes; each segment is encoded. */
const artifactPath = (id, path) => `${runPath(id)}/artifacts/${path.split("/").map(enc).join("/")}`;

export const api = {
  config: () => request("GET", "/research/config.json"),
  // The token travels once, in this JSON body; the server answers with a session (its id in an HttpOnly
  // cookie, never the token), so no script, URL or storage ever holds the token. Signing out revokes it.
  session: () => request("GET", "/api/session", undefined, { signIn: true }),
  signIn: (token) => request("POST", "/api/session", { token }, { signIn: true }),
  signOut: () => request("DELETE", "/api/session", undefined, { signIn: true }),
  listRuns: ({ status = "", limit = 30, offset = 0, q = "" } = {}) => {
    const query = new URLSearchParams({ limit: String(limit), offset: String(offset) });
    if (status) query.set("status", status);
    if (q) query.set("q", q);
    return request("GET", `/api/runs?${query}`);
  },
  getRun: (id) => request("GET", runPath(id)),
  /** @param {string} id @param {string|null} title null: named by its question again */
  renameRun: (id, title) => request("PATCH", runPath(id), { title }),
  deleteRun: (id) => request("DELETE", runPath(id)),
  /** the evidence passages rendered by the server's report rule: {passages: [{n, html}]} */
  passages: (id) => request("GET", `${runPath(id)}/passages`),
  /** the text the run read from `url` (from its fetch's receipt) */
  sourceText: (id, url) => request("GET", `${runPath(id)}/source-text?url=${enc(url)}`),
  reportMarkdown: (id) => requestText(`${runPath(id)}/report?format=md`),
  /** what a run could reach from this server now: web search providers and the model */
  providersHealth: () => request("GET", "/api/providers/health"),
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
  /** answer the plan review a run waits for: {action: "approve"|"edit"|"reject", plan?, reason?} */
  answerInput: (id, answer) => request("POST", `${runPath(id)}/input`, answer),
  /** what a fork from this checkpoint with this patch would keep, rerun and reuse (creates nothing) */
  forkPreview: (id, checkpointId, patch) =>
    request("POST", `${runPath(id)}/fork/preview`, { checkpoint_id: checkpointId, patch }),
  /** a NEW run from this checkpoint with the patch applied; this run stays as it is */
  fork: (id, checkpointId, patch) => request("POST", `${runPath(id)}/fork`, { checkpoint_id: checkpointId, patch }),
  /** a NEW run for a follow-up question on this completed one, seeded with its sources */
  followUp: (id, question) => request("POST", `${runPath(id)}/follow-up`, { question }),
  checkpoints: (id) => request("GET", `${runPath(id)}/checkpoints`),
  preview: (id, checkpointId) => request("GET", `${runPath(id)}/checkpoints/${enc(checkpointId)}/preview`),
  artifacts: (id) => request("GET", `${runPath(id)}/artifacts`),
  artifactJson: (id, path) => request("GET", artifactPath(id, path)),
  artifactText: (id, path) => requestText(artifactPath(id, path)),
  reportHtml: (id) => requestText(`${runPath(id)}/report?format=html`),
  /** the server's collections and the user's uploaded ones: {collections: [{name, kind, documents}]} */
  collections: () => request("GET", "/api/collections"),
  documents: (name) => request("GET", documentsPath(name)),
  /** @param {string} name @param {File} file @param {(fraction: number) => void} onProgress */
  uploadDocument: (name, file, onProgress) =>
    upload(`${documentsPath(name)}/${enc(file.name)}`, file, onProgress),
  deleteDocument: (name, fileName) => request("DELETE", `${documentsPath(name)}/${enc(fileName)}`),
};

export const urls = {
  events: (id, after) => `${runPath(id)}/events${after ? `?after=${after}` : ""}`,
  artifact: artifactPath,
  report: (id, format) => `${runPath(id)}/report?format=${format}`,
  docx: (id) => `${runPath(id)}/report.docx`,
};
