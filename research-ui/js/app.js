// The workbench: routing (#run=<id>, #new, #documents), one open run (its model, stream and views), actions.

import { api } from "./api.js";
import { DocumentsView } from "./documents.js";
import { $, ago, between, compact, duration, fill, h, setText, usd } from "./dom.js";
import { STATUS_LABEL, apply, createModel, isActive, setStages } from "./events.js";
import { NewResearchForm } from "./form.js";
import { forgetHealth } from "./preflight.js";
import { GraphView } from "./graph.js";
import { HistoryView } from "./history.js";
import { describe } from "./progress.js";
import { ReportView } from "./report.js";
import { ResumeView } from "./resume.js";
import { SessionGate } from "./session.js";
import { SourcesView } from "./sources.js";
import { RunStream } from "./stream.js";
import { Tabs } from "./tabs.js";
import { setupTheme } from "./theme.js";
import { TimelineView } from "./timeline.js";

/** Files each stage writes that the views read (reloaded when the stage finishes). */
const STAGE_FILES = {
  fetch_sources: ["sources-fetched.json"],
  screen_evidence: ["evidence-table.json"],
  write_report: ["sources.json", "evidence.json", "deepresearch-report.html"],
};
const WATCHED = {
  "sources-fetched.json": "fetched",
  "sources.json": "final",
  "evidence-table.json": "table",
  "evidence.json": "evidence",
};

/**
 * @typedef {{id: string, model: ReturnType<typeof createModel>, stream: RunStream, detail: any,
 *   artifacts: {path: string, size: number}[], loaded: Map<string, number>, pausing: boolean}} OpenRun
 */

const app = {
  /** @type {OpenRun|null} */
  run: null,
  /** the server's configuration (config.json), loaded once at boot */
  config: null,
  frame: 0,
  artifactTimer: 0,
  ticker: 0,
  refreshTimer: 0,
  /** @type {OpenRun|null} */
  refreshRun: null,
  openToken: 0,
  /** routing starts with the first session (a server that requires a token shows nothing before) */
  started: false,
};

// --- views ---------------------------------------------------------------------------------------------
const mainTabs = new Tabs($("main-tabs"), (tab) => onMainTab(tab));
const sideTabs = new Tabs($("side-tabs"));
// built at boot, once config.json is in: the graph draws the server's stages, the budget fields of the
// resume view take its bounds
/** @type {GraphView} */
let graph;
/** @type {ResumeView} */
let resumeView;
const timeline = new TimelineView($("timeline"), {
  onResume: () => resume(null),
  onCheckpoints: () => mainTabs.select("tab-checkpoints", { focus: true }),
});
const sources = new SourcesView(
  {
    list: $("sources"),
    evidence: $("evidence"),
    sourcesCount: $("sources-count"),
    evidenceCount: $("evidence-count"),
  },
  { onShowSources: () => sideTabs.select("tab-sources") },
);
const report = new ReportView(
  { tools: $("report-tools"), article: $("report"), files: $("files") },
  { onCite: (n, link) => sources.reveal(n, link) },
);
const history = new HistoryView(
  {
    list: $("history-list"),
    empty: $("history-empty"),
    more: /** @type {HTMLButtonElement} */ ($("history-more")),
    filter: /** @type {HTMLSelectElement} */ ($("history-filter")),
  },
  { onRuns: (runs) => watchCurrent(runs) },
);
const form = new NewResearchForm(/** @type {HTMLFormElement} */ ($("new-form")), {
  onStarted: (run) => {
    location.hash = `#run=${encodeURIComponent(run.run_id)}`;
    history.refresh();
  },
});

const documents = new DocumentsView({
  // uploads and deletions change what the form's collection picker offers
  onChanged: (collections) => form.setCollections(collections.map((c) => c.name)),
  onUse: (name) => {
    form.useCollection(name);
    location.hash = "#new";
  },
});

const gate = new SessionGate({
  onSignedIn: (session) => signedIn(session),
  onSignedOut: ({ deliberate }) => signedOut(deliberate),
  onUnavailable: (message) => form.unavailable(`${message.replace(/\.$/, "")}. Reload to try again.`),
});

// --- session -------------------------------------------------------------------------------------------
/** Signed in (or no token needed): the collections, the history, the route; a run open before reopens. */
function signedIn(session) {
  form.setCollections(session.collections);
  form.signedIn();
  history.start();
  if (!app.started) {
    app.started = true;
    window.addEventListener("hashchange", route);
  } else {
    closeRun(); // its stream stopped at the 401: open it again with the new session
  }
  route();
}

/**
 * The session ended. A revoked token (`deliberate` false) only pauses the workbench behind the dialog:
 * what the user typed and the open view stay. Signing out forgets everything the user saw.
 */
function signedOut(deliberate) {
  history.stop({ clear: deliberate });
  clearTimeout(app.artifactTimer);
  app.run?.stream.stop();
  setBanner(false);
  if (!deliberate) return;
  closeRun();
  app.openToken += 1; // a run still opening is not shown
  timeline.reset();
  sources.reset();
  report.reset();
  resumeView.reset();
  documents.reset();
  forgetHealth();
  form.clear(app.config.defaults);
  history.setCurrent(null);
  showView("new");
  if (location.hash !== "#new") location.hash = "#new";
}

// --- routing ---------------------------------------------------------------------------------------------
function route() {
  const match = /^#run=([^&]+)/.exec(location.hash);
  if (match) {
    openRun(decodeURIComponent(match[1]));
  } else if (location.hash === "" || location.hash === "#" || location.hash === "#new") {
    showNew();
  } else if (location.hash === "#documents") {
    showDocuments();
  }
  closeHistoryDrawer();
}

function showView(name) {
  $("new-view").hidden = name !== "new";
  $("run-view").hidden = name !== "run";
  $("missing-view").hidden = name !== "missing";
  $("docs-view").hidden = name !== "documents";
  $("nav-documents").toggleAttribute("aria-current", name === "documents");
}

function showNew() {
  closeRun();
  showView("new");
  history.setCurrent(null);
  document.title = "deepresearch · workbench";
  $("question").focus();
  form.checkProviders();
}

function showDocuments() {
  closeRun();
  showView("documents");
  history.setCurrent(null);
  document.title = "My documents · deepresearch";
  $("docs-title").focus();
  documents.show();
}

function closeRun() {
  if (!app.run) return;
  app.run.stream.close();
  app.run = null;
  clearTimeout(app.artifactTimer);
  clearInterval(app.ticker);
  app.ticker = 0;
  setBanner(false);
}

/** Open a run: fetch its detail, then replay its whole event log from seq 0 and keep tailing it. */
async function openRun(runId) {
  if (app.run?.id === runId) return;
  closeRun();
  const token = ++app.openToken;
  history.setCurrent(runId);
  timeline.reset();
  sources.reset();
  report.reset();
  resumeView.reset();
  let detail;
  try {
    detail = await api.getRun(runId);
  } catch (error) {
    if (token !== app.openToken) return;
    showCannotOpen(runId, error);
    return;
  }
  if (token !== app.openToken) return;
  const model = createModel(detail); // its status is the detail's until the replay says otherwise
  /** @type {OpenRun} */
  const run = {
    id: runId,
    model,
    detail,
    artifacts: detail.artifacts || [],
    loaded: new Map(),
    pausing: false,
    stream: new RunStream(runId, {
      onEvent: (event) => onEvent(run, event),
      onState: (state) => onStreamState(run, state),
      onClosed: () => onStreamClosed(run),
    }),
  };
  app.run = run;
  const focusLost =
    document.activeElement === document.body || $("new-view").contains(document.activeElement);
  setText($("run-question"), detail.question);
  showView("run");
  if (focusLost) $("run-question").focus(); // e.g. the Start button that just disappeared
  mainTabs.select(detail.status === "completed" ? "tab-report" : "tab-activity", { silent: true });
  sideTabs.select("tab-sources", { silent: true });
  setText($("run-error"), "");
  $("run-error").hidden = true;
  document.title = `${detail.question.slice(0, 60)} · deepresearch`;
  run.stream.open(0);
  app.ticker = setInterval(() => app.run && isActive(app.run.model) && scheduleRender(), 1000);
  scheduleRender();
  scheduleArtifacts(0);
}

// --- events --------------------------------------------------------------------------------------------------
/** @param {OpenRun} run */
function onEvent(run, event) {
  if (app.run !== run || !apply(run.model, event)) return;
  const stageResult = event.type === "tool_result" && !("parent_call_id" in event) && event.ok;
  if (stageResult && STAGE_FILES[event.stage]) {
    for (const name of STAGE_FILES[event.stage]) run.loaded.delete(name);
    scheduleArtifacts();
  } else if (event.type === "end") {
    run.pausing = false;
    scheduleArtifacts();
    scheduleRefresh(run);
  } else if (event.type === "run_status") {
    scheduleRefresh(null);
  }
  scheduleRender();
}

function onStreamState(run, state) {
  if (app.run !== run) return;
  if (state === "reconnecting") {
    setBanner(true, "Connection lost. Reconnecting… the run goes on on the server.");
    checkStopped(run);
  } else if (state === "open" || state === "closed") {
    setBanner(false);
  }
}

/**
 * A stream reopened on a run that has stopped meanwhile (and sent nothing new) is closed by the server
 * without an `end`: that is not a lost connection. Ask the server; if the run is stopped, stop listening.
 */
async function checkStopped(run) {
  try {
    const detail = await api.getRun(run.id);
    if (app.run !== run || isActive(detail) || run.stream.state !== "reconnecting" || run.stream.final)
      return;
    run.detail = detail;
    run.stream.open(run.model.lastSeq, { final: true }); // read what is left, then stop quietly
  } catch {
    /* the server is unreachable: the banner stays and the browser keeps retrying */
  }
}

/** The server closed the stream after the run's `end`: reopen only if the run was started again since. */
function onStreamClosed(run) {
  if (app.run !== run) return;
  if (run.stream.final) {
    // nothing more to read from a run the server says is stopped: trust the server's status
    if (isActive(run.model) && run.detail && !isActive(run.detail)) {
      run.model.status = run.detail.status;
      run.model.rev += 1;
      scheduleRender();
    }
    return;
  }
  if (isActive(run.model)) run.stream.open(run.model.lastSeq);
}

/** History polling doubles as a watch on the open run: another tab or the CLI may have resumed it. */
function watchCurrent(runs) {
  const run = app.run;
  if (!run) return;
  const listed = runs.find((r) => r.run_id === run.id);
  if (listed && (listed.status === "queued" || listed.status === "running") && !run.stream.isOpen) {
    run.stream.open(run.model.lastSeq);
  }
}

/** After a status change: the history list (and the run's detail), once the burst of events is over. */
function scheduleRefresh(run) {
  if (run) app.refreshRun = run;
  clearTimeout(app.refreshTimer);
  app.refreshTimer = setTimeout(() => {
    const target = app.refreshRun;
    app.refreshRun = null;
    history.refresh();
    if (target && app.run === target) refreshDetail(target);
  }, 200);
}

async function refreshDetail(run) {
  try {
    const detail = await api.getRun(run.id);
    if (app.run === run) {
      run.detail = detail;
      run.model.options = detail.options || run.model.options;
      scheduleRender();
    }
  } catch {
    /* keep the last detail */
  }
}

// --- files the views read --------------------------------------------------------------------------------------
function scheduleArtifacts(delay = 250) {
  clearTimeout(app.artifactTimer);
  app.artifactTimer = setTimeout(() => loadArtifacts(app.run), delay);
}

/** @param {OpenRun|null} run */
async function loadArtifacts(run) {
  if (!run) return;
  try {
    const { artifacts } = await api.artifacts(run.id);
    if (app.run !== run) return;
    run.artifacts = artifacts;
    const files = {};
    for (const file of artifacts) {
      const slot = WATCHED[file.path];
      if (!slot || run.loaded.get(file.path) === file.size) continue;
      files[slot] = await api.artifactJson(run.id, file.path);
      run.loaded.set(file.path, file.size);
    }
    if (app.run !== run) return;
    sources.setFiles(files);
    const citations = await report.load(run.id, run.model.status, artifacts);
    if (citations) sources.setCitations(citations);
    if (mainTabs.current === "tab-files") report.renderFiles(run.id, artifacts);
    scheduleRender();
  } catch (error) {
    if (app.run === run) showRunProblem(`Could not load the run's files: ${error.message}`);
  }
}

// --- actions ------------------------------------------------------------------------------------------------------
/** Pause: ask the server to cancel first, then keep listening until it confirms `cancelled`. */
async function pause() {
  const run = app.run;
  if (!run) return;
  run.pausing = true;
  showRunProblem("");
  scheduleRender();
  try {
    await api.cancel(run.id);
  } catch (error) {
    run.pausing = false;
    showRunProblem(`Could not pause: ${error.message}`);
  }
  if (!run.stream.isOpen) run.stream.open(run.model.lastSeq);
  scheduleRender();
}

/** Continue from the latest checkpoint (null) or from a chosen one (an older one forks). */
async function resume(checkpointId, options) {
  const run = app.run;
  if (!run) return;
  showRunProblem("");
  try {
    await api.resume(run.id, checkpointId, options);
  } catch (error) {
    showRunProblem(`Could not continue: ${error.message}`);
    return;
  }
  run.pausing = false;
  run.model.status = "queued"; // until the stream says it runs
  run.model.rev += 1;
  if (!run.stream.isOpen) run.stream.open(run.model.lastSeq);
  mainTabs.select("tab-activity");
  history.refresh();
  scheduleRender();
}

/** Never a blank page: say why the run cannot be shown, and offer to try again when that may help. */
function showCannotOpen(runId, error) {
  const missing = error.status === 404;
  setText(
    $("missing-title"),
    missing ? "This run does not exist (any more)" : "The run cannot be opened right now",
  );
  setText(
    $("missing-text"),
    missing ? "It may have been deleted. Pick another one from the history." : error.message,
  );
  const retry = $("missing-retry");
  retry.hidden = missing;
  retry.onclick = () => openRun(runId);
  showView("missing");
}

function showRunProblem(message) {
  const box = $("run-error");
  setText(box, message);
  box.hidden = !message;
}

function setBanner(visible, text) {
  const banner = $("conn-banner");
  if (text) setText($("conn-banner-text"), text);
  banner.hidden = !visible;
}

function onMainTab(tab) {
  const run = app.run;
  if (!run) return;
  if (tab === "tab-files") report.renderFiles(run.id, run.artifacts);
  if (tab === "tab-checkpoints") resumeView.load(run.detail, run.model);
}

// --- rendering ------------------------------------------------------------------------------------------------------
function scheduleRender() {
  if (app.frame) return;
  app.frame = requestAnimationFrame(() => {
    app.frame = 0;
    if (app.run) render(app.run);
  });
}

/** @param {OpenRun} run */
function render(run) {
  const model = run.model;
  if (!isActive(model)) run.pausing = false;
  const pausing = model.status === "running" && (run.pausing || model.cancelRequested);
  const pill = $("run-status");
  pill.dataset.status = pausing ? "pausing" : model.status;
  history.patch(run.id, model.status);
  setText(pill, pausing ? "Pausing…" : STATUS_LABEL[model.status] || model.status);
  renderEngine(model.engine, run.detail?.llm);
  const when = $("run-when");
  setText(when, model.createdAt ? `started ${ago(model.createdAt)}` : "");
  when.title = model.createdAt ? new Date(model.createdAt).toLocaleString() : "";
  setText($("run-question"), model.question);
  const progress = describe(model, { pausing });
  setText($("run-progress"), progress.headline);
  setText($("run-progress-detail"), progress.detail);
  renderActions(model, pausing);
  renderUsage(model);
  renderModelQuality(model);
  report.setDraft(model.draft, isActive(model));
  graph.render(model);
  timeline.render(model);
  sources.render(model);
  if (mainTabs.current === "tab-checkpoints") resumeView.load(run.detail, model);
}

/** @param {string|null} engine @param {{model: string, structured_output: string|null}|null} [llm] */
function renderEngine(engine, llm) {
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
function renderModelQuality(model) {
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

function renderActions(model, pausing) {
  const pauseButton = /** @type {HTMLButtonElement} */ ($("btn-pause"));
  const continueButton = /** @type {HTMLButtonElement} */ ($("btn-continue"));
  const stopped = ["cancelled", "interrupted", "failed"].includes(model.status);
  pauseButton.hidden = !isActive(model);
  pauseButton.disabled = pausing || model.status === "queued";
  setText(pauseButton, pausing ? "Pausing…" : "Pause");
  continueButton.hidden = !stopped;
  setText(continueButton, model.budgetStop ? "Raise the limit and continue…" : "Continue research");
  setText(
    $("btn-checkpoints"),
    model.status === "completed" ? "Fork from a checkpoint" : "Checkpoints & resume",
  );
}

function renderUsage(model) {
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

// --- chrome: engine badge, history drawer, skip link ---------------------------------------------------------------------
function closeHistoryDrawer() {
  document.body.classList.remove("history-open");
  $("history-toggle").setAttribute("aria-expanded", "false");
  $("scrim").hidden = true;
}

function setupChrome() {
  setupTheme(/** @type {HTMLButtonElement} */ ($("theme-toggle")));
  $("history-toggle").addEventListener("click", () => {
    const open = document.body.classList.toggle("history-open");
    $("history-toggle").setAttribute("aria-expanded", String(open));
    $("scrim").hidden = !open;
    if (open) $("history-list").querySelector("a")?.focus();
  });
  $("scrim").addEventListener("click", closeHistoryDrawer);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && document.body.classList.contains("history-open")) {
      closeHistoryDrawer();
      $("history-toggle").focus();
    }
  });
  $("skip-link").addEventListener("click", (event) => {
    event.preventDefault(); // the hash is the app's route
    $("main").focus();
  });
  $("btn-pause").addEventListener("click", pause);
  $("btn-continue").addEventListener("click", () => {
    // a budget limit stopped it: continuing as it is would stop again, so go where the limit can be raised
    if (app.run?.model.budgetStop) mainTabs.select("tab-checkpoints", { focus: true });
    else resume(null);
  });
  $("btn-checkpoints").addEventListener("click", () => mainTabs.select("tab-checkpoints", { focus: true }));
  $("btn-reuse").addEventListener("click", () => {
    const run = app.run;
    if (!run) return;
    form.load(run.detail.question, run.detail.options || run.model.options);
    location.hash = "#new";
  });
  $("new-research").addEventListener("click", (event) => {
    if (location.hash === "#new") {
      event.preventDefault();
      showNew();
    }
  });
  window.addEventListener("offline", () =>
    setBanner(
      true,
      "You are offline. The run goes on on the server; this view catches up when you are back.",
    ),
  );
  window.addEventListener("online", () => {
    setBanner(false);
    if (app.run && !app.run.stream.isOpen && isActive(app.run.model))
      app.run.stream.open(app.run.model.lastSeq);
    history.refresh();
  });
}

/**
 * The server's configuration: engine, defaults, bounds and stages. Without it the workbench would have to
 * make them up, so it says why and starts nothing.
 * @returns {Promise<boolean>} whether it loaded
 */
async function loadConfig() {
  try {
    const config = await api.config();
    if (!config?.stages?.length || !config.defaults || !config.limits) {
      throw new Error("it has no stages, defaults or limits");
    }
    app.config = config;
  } catch (error) {
    const reason = String(error.message).replace(/\.$/, "");
    form.unavailable(`Could not load the server's configuration: ${reason}. Reload to try again.`);
    showView("new");
    return false;
  }
  setStages(app.config.stages);
  form.configure(app.config);
  const badge = $("engine-badge");
  const { engine, model } = app.config;
  badge.hidden = !engine;
  badge.dataset.engine = engine || "";
  // the kind always shows; the detail only where the top bar has room (styles.css)
  const [kind, detail] =
    engine === "extractive" ? ["Extractive", " mode"] : engine === "llm" ? ["LLM", ` · ${model}`] : ["", ""];
  fill(badge, kind, h("span", { class: "badge-detail", text: detail }));
  badge.title =
    engine === "extractive"
      ? "No language model is configured: keyword planning, BM25 screening and a report made only of quoted, cited sentences."
      : `Reports are written by ${model}; every citation is checked against its source.`;
  return true;
}

/** Everything that shows a run needs the server's stages: nothing is built or routed before they are in. */
async function boot() {
  setupChrome();
  if (!(await loadConfig())) return;
  graph = new GraphView($("graph"), $("graph-caption"));
  resumeView = new ResumeView($("resume"), app.config.limits, {
    onContinue: (checkpointId, options) => resume(checkpointId, options),
  });
  await gate.check(); // signed in → signedIn() routes; else the sign-in dialog
}

boot();
