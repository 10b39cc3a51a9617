// The open run: its model, stream and views — opened from the route, fed by the event stream, its files
// reloaded as stages write them, its actions (pause, continue) and its rendering.

import { api } from "../core/api.js";
import { $, ago, setText } from "../core/dom.js";
import { apply, createModel } from "./model/events.js";
import { stageArtifacts, statusLabel } from "../core/nodes.js";
import { describe } from "./progress.js";
import {
  renderActions,
  renderEngine,
  renderLineage,
  renderModelQuality,
  renderUsage,
} from "./run-render.js";
import { isActive } from "./model/selectors.js";
import { RunStream } from "../core/stream.js";

/** The files the views read, by the slot they fill; reloaded when the stage that writes one finishes. */
const WATCHED = {
  "search-results.json": "search",
  "sources-fetched.json": "fetched",
  "sources.json": "final",
  "evidence-table.json": "table",
  "evidence.json": "evidence",
};

/**
 * @typedef {{id: string, model: ReturnType<typeof createModel>, stream: RunStream, detail: any,
 *   artifacts: {path: string, size: number}[], loaded: Map<string, number>, pausing: boolean}} OpenRun
 */
const state = {
  /** @type {OpenRun|null} */
  run: null,
  frame: 0,
  artifactTimer: 0,
  ticker: 0,
  refreshTimer: 0,
  /** @type {OpenRun|null} */
  refreshRun: null,
  openToken: 0,
};

/**
 * The views the run page draws into (built by app.js at boot).
 * @typedef {{mainTabs: any, sideTabs: any, graph: any, resumeView: any, timeline: any, sources: any,
 *   report: any, history: any, planReview: any, followUp: any, showView: (name: string) => void}} RunViews
 */
/** @type {RunViews} */
let views;
let mainTabs, sideTabs, graph, resumeView, timeline, sources, report, history, planReview, followUp;

/** @param {RunViews} given */
export function setupRunPage(given) {
  views = given;
  ({ mainTabs, sideTabs, graph, resumeView, timeline, sources, report, history, planReview, followUp } = given);
}

/** @returns {OpenRun|null} */
export function openedRun() {
  return state.run;
}

/** Signed out or the session lapsed: stop listening (the view stays until `forget`). */
export function stopListening() {
  clearTimeout(state.artifactTimer);
  state.run?.stream.stop();
  setBanner(false);
}

/** Signed out: a run still opening is not shown. */
export function forgetOpening() {
  state.openToken += 1;
}

export function closeRun() {
  if (!state.run) return;
  state.run.stream.close();
  state.run = null;
  clearTimeout(state.artifactTimer);
  clearInterval(state.ticker);
  state.ticker = 0;
  setBanner(false);
}

/** Open a run: fetch its detail, then replay its whole event log from seq 0 and keep tailing it. */
export async function openRun(runId) {
  if (state.run?.id === runId) return;
  closeRun();
  const token = ++state.openToken;
  history.setCurrent(runId);
  timeline.reset();
  sources.reset();
  report.reset();
  resumeView.reset();
  let detail;
  try {
    detail = await api.getRun(runId);
  } catch (error) {
    if (token !== state.openToken) return;
    showCannotOpen(runId, error);
    return;
  }
  if (token !== state.openToken) return;
  report.setFileName(detail.download_stem);
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
      onState: (streamState) => onStreamState(run, streamState),
      onClosed: () => onStreamClosed(run),
    }),
  };
  state.run = run;
  const focusLost =
    document.activeElement === document.body || $("new-view").contains(document.activeElement);
  setText($("run-question"), detail.question);
  views.showView("run");
  if (focusLost) $("run-question").focus(); // e.g. the Start button that just disappeared
  mainTabs.select(detail.status === "completed" ? "tab-report" : "tab-activity", { silent: true });
  sideTabs.select("tab-sources", { silent: true });
  setText($("run-error"), "");
  $("run-error").hidden = true;
  document.title = `${detail.question.slice(0, 60)} · deepresearch`;
  run.stream.open(0);
  state.ticker = setInterval(() => state.run && isActive(state.run.model) && scheduleRender(), 1000);
  scheduleRender();
  scheduleArtifacts(0);
}

// --- events --------------------------------------------------------------------------------------------------
/** @param {OpenRun} run */
function onEvent(run, event) {
  if (state.run !== run || !apply(run.model, event)) return;
  const stageResult = event.type === "tool_result" && !("parent_call_id" in event) && event.ok;
  const written = stageResult ? stageArtifacts(event.stage).filter((name) => name in WATCHED) : [];
  if (written.length) {
    for (const name of written) run.loaded.delete(name);
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

function onStreamState(run, streamState) {
  if (state.run !== run) return;
  if (streamState === "reconnecting") {
    setBanner(true, "Connection lost. Reconnecting… the run goes on on the server.");
    checkStopped(run);
  } else if (streamState === "open" || streamState === "closed") {
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
    if (state.run !== run || isActive(detail) || run.stream.state !== "reconnecting" || run.stream.final)
      return;
    run.detail = detail;
    run.stream.open(run.model.lastSeq, { final: true }); // read what is left, then stop quietly
  } catch {
    /* the server is unreachable: the banner stays and the browser keeps retrying */
  }
}

/** The server closed the stream after the run's `end`: reopen only if the run was started again since. */
function onStreamClosed(run) {
  if (state.run !== run) return;
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
export function watchCurrent(runs) {
  const run = state.run;
  if (!run) return;
  const listed = runs.find((r) => r.run_id === run.id);
  if (listed && (listed.status === "queued" || listed.status === "running") && !run.stream.isOpen) {
    run.stream.open(run.model.lastSeq);
  }
}

/** After a status change: the history list (and the run's detail), once the burst of events is over. */
function scheduleRefresh(run) {
  if (run) state.refreshRun = run;
  clearTimeout(state.refreshTimer);
  state.refreshTimer = setTimeout(() => {
    const target = state.refreshRun;
    state.refreshRun = null;
    history.refresh();
    if (target && state.run === target) refreshDetail(target);
  }, 200);
}

async function refreshDetail(run) {
  try {
    const detail = await api.getRun(run.id);
    if (state.run === run) {
      run.detail = detail;
      run.model.options = detail.options || run.model.options;
      report.setFileName(detail.download_stem);
      scheduleRender();
    }
  } catch {
    /* keep the last detail */
  }
}

// --- files the views read --------------------------------------------------------------------------------------
function scheduleArtifacts(delay = 250) {
  clearTimeout(state.artifactTimer);
  state.artifactTimer = setTimeout(() => loadArtifacts(state.run), delay);
}

/** @param {OpenRun|null} run */
async function loadArtifacts(run) {
  if (!run) return;
  try {
    const { artifacts } = await api.artifacts(run.id);
    if (state.run !== run) return;
    run.artifacts = artifacts;
    const files = {};
    for (const file of artifacts) {
      const slot = WATCHED[file.path];
      if (!slot || run.loaded.get(file.path) === file.size) continue;
      files[slot] = await api.artifactJson(run.id, file.path);
      run.loaded.set(file.path, file.size);
    }
    if (state.run !== run) return;
    sources.setFiles(files);
    timeline.setFiles({ search: files.search, fetched: files.fetched });
    if (files.evidence || files.table) {
      // the passages as the server renders them (the report's rule): they replace the plain text
      const { passages } = await api.passages(run.id);
      if (state.run !== run) return;
      sources.setPassages(passages);
    }
    const citations = await report.load(run.id, run.model.status, artifacts);
    if (citations) sources.setCitations(citations);
    if (mainTabs.current === "tab-files") report.renderFiles(run.id, artifacts);
    scheduleRender();
  } catch (error) {
    if (state.run === run) showRunProblem(`Could not load the run's files: ${error.message}`);
  }
}

// --- actions ------------------------------------------------------------------------------------------------------
/** Pause: ask the server to cancel first, then keep listening until it confirms `cancelled`. */
export async function pause() {
  const run = state.run;
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
export async function resume(checkpointId, options) {
  const run = state.run;
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

/** The plan review was answered (plan-review.js): the run goes on (or ends, rejected) — follow it live. */
export function answered(runId, detail) {
  const run = state.run;
  if (!run || run.id !== runId) return;
  run.detail = detail;
  run.model.status = detail.status;
  run.model.pendingInput = null;
  run.model.rev += 1;
  if (!run.stream.isOpen) run.stream.open(run.model.lastSeq);
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
  views.showView("missing");
}

export function showRunProblem(message) {
  const box = $("run-error");
  setText(box, message);
  box.hidden = !message;
}

export function setBanner(visible, text) {
  const banner = $("conn-banner");
  if (text) setText($("conn-banner-text"), text);
  banner.hidden = !visible;
}

export function onMainTab(tab) {
  const run = state.run;
  if (!run) return;
  if (tab === "tab-files") report.renderFiles(run.id, run.artifacts);
  if (tab === "tab-checkpoints") resumeView.load(run.detail, run.model);
}

// --- rendering ------------------------------------------------------------------------------------------------------
function scheduleRender() {
  if (state.frame) return;
  state.frame = requestAnimationFrame(() => {
    state.frame = 0;
    if (state.run) render(state.run);
  });
}

/** @param {OpenRun} run */
function render(run) {
  const model = run.model;
  if (!isActive(model)) run.pausing = false;
  const pausing = model.status === "running" && (run.pausing || model.cancelRequested);
  const pill = $("run-status");
  pill.dataset.status = pausing ? "pausing" : model.status;
  history.patch(run.id, model.status, model.planRejected);
  setText(pill, pausing ? "Pausing…" : statusLabel(model.status, model.planRejected));
  renderEngine(model.engine, run.detail?.llm);
  renderLineage(run.detail);
  const when = $("run-when");
  setText(when, model.createdAt ? `started ${ago(model.createdAt)}` : "");
  when.title = model.createdAt ? new Date(model.createdAt).toLocaleString() : "";
  setText($("run-question"), model.question);
  fitTitle();
  const progress = describe(model, { pausing });
  setText($("run-progress"), progress.headline);
  setText($("run-progress-detail"), progress.detail);
  renderActions(model, pausing);
  planReview.update(run.id, model.status, run.detail?.pending_input || model.pendingInput);
  followUp.update(run.id, model.status);
  renderUsage(model);
  renderModelQuality(model);
  report.setDraft(model.draft, isActive(model));
  graph.render(model);
  timeline.render(model);
  sources.render(model);
  if (mainTabs.current === "tab-checkpoints") resumeView.load(run.detail, model);
}

/** A long question is clamped to a few lines (css/daily.css); "Show all" appears only when something is hidden. */
export function fitTitle() {
  const title = $("run-question");
  const more = $("run-question-more");
  const clamped = title.classList.contains("is-clamped");
  more.hidden = clamped ? title.scrollHeight <= title.clientHeight + 1 : false;
  setText(more, clamped ? "Show all" : "Show less");
  more.setAttribute("aria-expanded", String(!clamped));
}

/** Toggle the title between its few lines and the whole question. */
export function toggleTitle() {
  $("run-question").classList.toggle("is-clamped");
  fitTitle();
}
