// The workbench: boot (the server's configuration), the session, routing (#run=<id>, #new, #documents)
// and the page's chrome. The open run lives in run-page.js.

import { api } from "./core/api.js";
import { DocumentsView } from "./documents/documents.js";
import { FollowUpBox } from "./run/follow-up.js";
import { ForkDialog } from "./run/fork-dialog.js";
import { $, fill, h } from "./core/dom.js";
import { NewResearchForm } from "./form/form.js";
import { PlanReview } from "./run/plan-review.js";
import { GraphView } from "./run/graph.js";
import { HistoryView } from "./history/history.js";
import { setStages } from "./core/nodes.js";
import { forgetHealth } from "./form/preflight.js";
import { ReportView } from "./run/report.js";
import { ResumeView } from "./run/resume.js";
import {
  answered,
  closeRun,
  forgetOpening,
  onMainTab,
  openRun,
  openedRun,
  pause,
  resume,
  setBanner,
  setupRunPage,
  stopListening,
  fitTitle,
  toggleTitle,
  watchCurrent,
} from "./run/run-page.js";
import { isActive } from "./run/model/selectors.js";
import { SessionGate } from "./core/session.js";
import { SourceReader, citePreviews } from "./run/source-view.js";
import { SourcesView } from "./run/sources.js";
import { Tabs } from "./core/tabs.js";
import { setupTheme } from "./core/theme.js";
import { TimelineView } from "./run/timeline.js";

const app = {
  /** the server's configuration (config.json), loaded once at boot */
  config: null,
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
  {
    onShowSources: () => sideTabs.select("tab-sources"),
    onRead: (row, opener) => reader.open(row, opener),
  },
);
const reader = new SourceReader({
  runId: () => openedRun()?.id ?? null,
  passagesFor: (n) => sources.passagesFor(n),
});
const report = new ReportView(
  { tools: $("report-tools"), article: $("report"), files: $("files") },
  { onCite: (n, link) => sources.reveal(n, link) },
);
citePreviews($("report"), {
  titleOf: (n) => sources.titleOf(n),
  passagesFor: (n) => sources.passagesFor(n),
});
const history = new HistoryView(
  {
    list: $("history-list"),
    empty: $("history-empty"),
    more: /** @type {HTMLButtonElement} */ ($("history-more")),
    filter: /** @type {HTMLSelectElement} */ ($("history-filter")),
    search: /** @type {HTMLInputElement} */ ($("history-search")),
  },
  {
    onRuns: (runs) => watchCurrent(runs),
    // the open run is gone: nothing of it stays on the page
    onDeleted: (runId) => {
      if (openedRun()?.id === runId) location.hash = "#new";
    },
    onRenamed: () => {},
  },
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
  stopListening();
  if (!deliberate) return;
  closeRun();
  forgetOpening(); // a run still opening is not shown
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
  $("run-question-more").addEventListener("click", toggleTitle);
  // the title's few lines change with the width: "Show all" is offered only when something is hidden
  new ResizeObserver(() => fitTitle()).observe($("run-question"));
  $("btn-continue").addEventListener("click", () => {
    // a budget limit stopped it: continuing as it is would stop again, so go where the limit can be raised
    if (openedRun()?.model.budgetStop) mainTabs.select("tab-checkpoints", { focus: true });
    else resume(null);
  });
  $("btn-checkpoints").addEventListener("click", () => mainTabs.select("tab-checkpoints", { focus: true }));
  $("btn-reuse").addEventListener("click", () => {
    const run = openedRun();
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
    const run = openedRun();
    if (run && !run.stream.isOpen && isActive(run.model)) run.stream.open(run.model.lastSeq);
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
  documents.configure(app.config.uploads);
  const badge = $("engine-badge");
  const { engine, model } = app.config;
  badge.hidden = !engine;
  badge.dataset.engine = engine || "";
  // the kind always shows; the detail only where the top bar has room (css/responsive.css)
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
  // forks and follow-ups are new runs: each opens on its own page
  const openNew = (run) => {
    history.refresh();
    location.hash = `#run=${encodeURIComponent(run.run_id)}`;
  };
  const forkDialog = new ForkDialog({ onForked: openNew });
  resumeView = new ResumeView($("resume"), app.config.limits, {
    onContinue: (checkpointId, options) => resume(checkpointId, options),
    onForkWithChanges: (runId, checkpoint, opener) => forkDialog.open(runId, checkpoint, opener),
  });
  const planReview = new PlanReview($("plan-review"), { onAnswered: answered });
  const followUp = new FollowUpBox($("follow-up"), { onStarted: openNew });
  setupRunPage({
    mainTabs,
    sideTabs,
    graph,
    resumeView,
    timeline,
    sources,
    report,
    history,
    planReview,
    followUp,
    showView,
  });
  await gate.check(); // signed in → signedIn() routes; else the sign-in dialog
}

boot();
