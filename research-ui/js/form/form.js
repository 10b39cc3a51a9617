// The new-research form: the question, the options that shape a run, and an estimate of the calls it
// will make before anything is spent.

import { api } from "../core/api.js";
import { $, count, fill, h, setText } from "../core/dom.js";
import { forgetRemembered, remember, withRemembered } from "./form-memory.js";
import { providersHealth, renderPreflight } from "./preflight.js";
import { labelOf, numberProblem, showFieldProblem } from "../core/validate.js";

// The defaults and bounds of these fields are the server's (config.json): none are written here.
const NUMBERS = ["max_research_loops", "queries_per_round", "results_per_query", "sources_to_fetch"];
const BUDGET = ["max_llm_tokens", "max_search_calls", "max_fetches", "deadline_seconds"];
/** the plan asks the model for at most this many sub-questions; each is screened once per round */
const MAX_SUB_QUESTIONS = 6;
/**
 * Attributes of a whole-number input (every number the workbench asks for, the deadline in whole seconds)
 * from the JSON Schema bounds the server gives for its option. HTML's `min` is inclusive, so an exclusive
 * minimum becomes the next whole number.
 * @param {{minimum?: number, exclusiveMinimum?: number, maximum?: number}} [limit]
 * @returns {{step: string, min?: string, max?: string}}
 */
export function wholeNumberBounds(limit = {}) {
  const bounds = /** @type {{step: string, min?: string, max?: string}} */ ({ step: "1" });
  const exclusive = limit.exclusiveMinimum;
  const min = limit.minimum ?? (exclusive === undefined ? undefined : Math.floor(exclusive) + 1);
  if (min !== undefined) bounds.min = String(min);
  if (limit.maximum !== undefined) bounds.max = String(limit.maximum);
  return bounds;
}

/**
 * Rough number of external calls a run with these options makes (an upper-end estimate: a run stops
 * looping as soon as the evidence is sufficient).
 */
export function estimateCalls(options, engine) {
  const loops = options.max_research_loops;
  const queries = options.queries_per_round;
  const searches = queries * loops;
  const fetches = options.sources_to_fetch * loops;
  const subQuestions = Math.min(MAX_SUB_QUESTIONS, Math.max(2, queries));
  const parts = {
    plan: 1,
    screening: subQuestions * loops,
    reflections: loops - 1,
    reviewers: options.reviewers.length,
    critic: options.requires_critic_review ? 1 : 0,
    report: 1,
  };
  const llm = engine === "extractive" ? 0 : Object.values(parts).reduce((a, b) => a + b, 0);
  return { searches, fetches, llm, parts, subQuestions };
}

export class NewResearchForm {
  /**
   * @param {HTMLFormElement} form
   * @param {{onStarted: (run: any) => void}} actions
   */
  constructor(form, actions) {
    this.form = form;
    this.actions = actions;
    this.engine = null;
    this.serverDocuments = false;
    /** the server's option bounds; null until configure(): the form starts nothing without them */
    this.limits = null;
    this.question = /** @type {HTMLTextAreaElement} */ ($("question"));
    this.error = $("form-error");
    this.estimateBox = $("estimate");
    this.preflight = $("preflight");
    /** GET /api/providers/health's last answer (null: not known, or the check failed) */
    this.health = null;
    this.startButton = /** @type {HTMLButtonElement} */ ($("start-button"));
    this.corpus = /** @type {HTMLInputElement} */ ($("opt-corpus"));
    this.collection = /** @type {HTMLSelectElement} */ ($("opt-corpus-name"));
    /** the document collections this server offers (GET /api/session); none until the session is in */
    this.collections = /** @type {string[]} */ ([]);
    /** a loaded run searched this, which the form cannot offer: shown, never sent */
    this.unavailableCorpus = /** @type {{corpus?: string|null, corpus_dir?: string|null}|null} */ (null);
    this.collection.addEventListener("change", () => {
      if (this.collection.value) this.setUnavailable(null);
    });
    form.addEventListener("input", () => this.update());
    form.addEventListener("change", () => this.update());
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    this.question.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        this.submit();
      }
    });
  }

  /**
   * Take the server's configuration: its defaults, the bounds of every number, the question limit and the
   * critic stage's name. Start is enabled only now.
   * @param {{engine: string|null, defaults: any, limits: Record<string, any>, max_question_chars: number,
   *   server_documents?: boolean, stages: import("../core/nodes.js").Stage[]}} config
   */
  configure(config) {
    this.engine = config.engine;
    this.limits = config.limits;
    // never maxLength: the browser would cut a pasted question without a word; the counter says it instead
    this.maxQuestion = config.max_question_chars;
    for (const name of [...NUMBERS, ...BUDGET]) {
      const input = this.field(name);
      for (const [attr, value] of Object.entries(wholeNumberBounds(config.limits[name]))) {
        input.setAttribute(attr, value);
      }
    }
    setText($("opt-critic-title"), config.stages.find((s) => s.key === "critic_review")?.title);
    this.defaults = config.defaults;
    /** a run naming no collection searches the server's own documents (only them with corpus_only) */
    this.serverDocuments = Boolean(config.server_documents);
    const last = withRemembered(config.defaults, config.limits, NUMBERS);
    this.pendingCorpus = last.corpus;
    this.setOptions(last.options);
    this.startButton.disabled = false;
  }

  /**
   * Without the server's configuration there is nothing honest to fill the options with or to start: say so,
   * hide the empty options, start nothing.
   */
  unavailable(message) {
    this.limits = null;
    this.startButton.disabled = true;
    for (const part of [this.form.querySelector("fieldset.options"), this.estimateBox]) part.hidden = true;
    this.showError(message);
  }

  /** @param {string} name */
  field(name) {
    return /** @type {HTMLInputElement} */ (this.form.elements.namedItem(name));
  }

  /**
   * The document collections the server offers (options.corpus). With none, documents cannot be searched
   * and the form says why. A choice already made stays if it is still offered.
   * @param {string[]} names
   */
  setCollections(names) {
    const chosen = this.collection.value;
    this.collections = [...names];
    const none = names.length === 0;
    const options = names.map((name) => h("option", { value: name, text: name }));
    fill(this.collection, names.length > 1 || this.unavailableCorpus ? choosePrompt() : null, ...options);
    this.collection.value = names.includes(chosen) ? chosen : names.length === 1 ? names[0] : "";
    $("corpus-none").hidden = !none;
    // the collection the last start searched, once the session says it is still offered
    const pending = this.pendingCorpus;
    if (pending && names.includes(pending.corpus) && !this.corpus.checked) {
      this.pendingCorpus = null;
      this.corpus.checked = true;
      this.collection.value = pending.corpus;
      this.field("corpus_only").checked = pending.only;
    }
    this.corpus.disabled = none;
    this.field("corpus_only").disabled = none;
    if (none) {
      this.corpus.checked = false;
      this.field("corpus_only").checked = false;
    }
    this.update();
  }

  /**
   * Fill the options: the server's defaults, or a past run's (`fromRun`). A run's collection is chosen
   * again by name; a run that searched a server folder (corpus_dir, CLI or an older server) or a collection
   * no longer offered shows it as unavailable: the form never sends a folder.
   * @param {any} options
   * @param {{fromRun?: boolean}} [how]
   */
  setOptions(options, { fromRun = false } = {}) {
    for (const name of NUMBERS) this.field(name).value = String(options[name]);
    for (const name of BUDGET) this.field(name).value = String(options.budget?.[name] ?? "");
    this.field("requires_critic_review").checked = options.requires_critic_review;
    this.field("review_plan").checked = Boolean(options.review_plan);
    for (const box of this.reviewerBoxes()) box.checked = options.reviewers.includes(box.value);
    const offered = Boolean(options.corpus) && this.collections.includes(options.corpus);
    // a run that named no collection on a server with its own documents searched those (its folder is
    // not told to the page): a run like it searches them again, nothing to show as unavailable
    const serverFolder = this.serverDocuments && !options.corpus;
    const searched = Boolean(options.corpus || (options.corpus_dir && !serverFolder));
    // the server's own default folder (DEEPRESEARCH_CORPUS_DIR) is not a choice the workbench makes
    this.setUnavailable(fromRun && searched && !offered ? options : null);
    this.corpus.checked = offered || this.unavailableCorpus !== null;
    if (offered) this.collection.value = options.corpus;
    this.field("corpus_only").checked = this.corpus.checked && Boolean(options.corpus_only);
    this.update();
  }

  /** @param {{corpus?: string|null, corpus_dir?: string|null}|null} searched */
  setUnavailable(searched) {
    this.unavailableCorpus = searched;
    const note = $("corpus-unavailable");
    note.hidden = !searched;
    if (!searched) return;
    if (!this.collection.querySelector('option[value=""]')) this.collection.prepend(choosePrompt());
    this.collection.value = "";
    const what = searched.corpus
      ? `the collection “${searched.corpus}”, which this server no longer offers`
      : `a folder on the server (${searched.corpus_dir}), which only the command line can choose`;
    setText(
      note,
      `That run searched ${what}. ` +
        (this.collections.length
          ? "Choose one of the collections offered, or untick “Search documents”."
          : "Untick “Search documents” to search the web."),
    );
    // with nothing to choose, the box is only there to show what the run did
    this.corpus.disabled = false;
  }

  /**
   * Search this collection (My documents' "Search it"): documents on, the collection chosen.
   * @param {string} name
   */
  useCollection(name) {
    if (!this.collections.includes(name)) return;
    this.setUnavailable(null);
    this.corpus.checked = true;
    this.collection.value = name;
    this.update();
  }

  /** Ask what this server can reach (at most once a minute); the answer shows when it comes. */
  async checkProviders() {
    const health = await providersHealth();
    if (health === this.health) return;
    this.health = health;
    this.renderPreflight();
  }

  renderPreflight() {
    renderPreflight(this.preflight, this.health, {
      documentsOnly: this.corpus.checked && this.field("corpus_only").checked,
      collections: this.collections.length,
      onDocumentsOnly: () => this.documentsOnly(),
    });
  }

  /** "Search only my documents": documents on, the web off, a collection chosen if there is one. */
  documentsOnly() {
    if (!this.collections.length) return;
    this.setUnavailable(null);
    this.corpus.checked = true;
    this.field("corpus_only").checked = true;
    if (!this.collections.includes(this.collection.value)) this.collection.value = this.collections[0];
    this.update();
    this.field("corpus_only").focus();
  }

  /** Signed in again: a refusal for want of a session is no longer true. */
  signedIn() {
    if (this.authProblem) this.showError("");
  }

  /** Signed out: nothing of the last user's question, nor what they used last, stays. */
  clear(defaults) {
    forgetRemembered();
    this.pendingCorpus = null;
    this.question.value = "";
    this.showError("");
    this.setOptions(defaults);
  }

  /** A past run's question and options, to start a new research like it. */
  load(question, options) {
    this.question.value = question || "";
    this.showError("");
    this.setOptions(options, { fromRun: true });
  }

  reviewerBoxes() {
    return /** @type {HTMLInputElement[]} */ ([...this.form.querySelectorAll('input[name="reviewer"]')]);
  }

  /**
   * What is out of the server's bounds, field by field (shown under each field); empty when all is well.
   * @returns {HTMLElement[]} the fields in error, in the form's order
   */
  validate() {
    const wrong = [];
    for (const name of [...NUMBERS, ...BUDGET]) {
      const input = this.field(name);
      const problem = numberProblem(input.value, this.limits?.[name], {
        label: labelOf(input),
        optional: BUDGET.includes(name),
      });
      showFieldProblem(input, problem);
      if (problem) wrong.push(input);
    }
    if (this.questionProblem()) wrong.unshift(this.question);
    return wrong;
  }

  /** The question's length against the server's limit, shown as the user types (never cut). */
  questionProblem() {
    const length = this.question.value.trim().length;
    const max = this.maxQuestion || Infinity;
    const over = length > max;
    const hint = $("question-count");
    setText(hint, max === Infinity ? "" : `${count(length)} / ${count(max)} characters`);
    hint.classList.toggle("is-over", over);
    const problem = over
      ? `The question is ${count(length)} characters long; this server takes at most ${count(max)}. ` +
        `Shorten it by ${count(length - max)} characters.`
      : null;
    showFieldProblem(this.question, problem);
    return problem;
  }

  /** The options as the API wants them (the numbers as typed: validate() said whether they fit). */
  options() {
    /** @type {Record<string, any>} */
    const options = {};
    for (const name of NUMBERS) options[name] = Number(this.field(name).value);
    options.reviewers = this.reviewerBoxes()
      .filter((b) => b.checked)
      .map((b) => b.value);
    options.requires_critic_review = this.field("requires_critic_review").checked;
    options.review_plan = this.field("review_plan").checked;
    const name = this.collection.value;
    options.corpus = this.corpus.checked && this.collections.includes(name) ? name : null;
    // no collection: the server's own documents (DEEPRESEARCH_CORPUS_DIR) and its corpus_only apply (null)
    options.corpus_only = options.corpus
      ? this.field("corpus_only").checked
      : this.serverDocuments
        ? null
        : false;
    const budget = {};
    for (const name of BUDGET) {
      const raw = this.field(name).value.trim();
      if (raw) budget[name] = Number(raw);
    }
    if (Object.keys(budget).length) options.budget = budget;
    return options;
  }

  update() {
    if (!this.limits) return; // typing before the configuration arrived (or when it could not)
    $("corpus-fields").hidden = !this.corpus.checked;
    if (!this.corpus.checked && this.unavailableCorpus) this.setUnavailable(null);
    if (!this.collections.length && !this.unavailableCorpus) this.corpus.disabled = true;
    // nothing to choose from: only the note on what the loaded run searched is shown
    const choice = this.collections.length > 0;
    for (const part of [this.collection, this.field("corpus_only")]) {
      /** @type {HTMLElement} */ (part.closest(".field, .check")).hidden = !choice;
    }
    this.renderPreflight();
    const wrong = this.validate();
    if (wrong.length) {
      // no estimate of a run that cannot start
      fill(
        this.estimateBox,
        h("p", { class: "estimate-note muted" }, "Fix the fields marked to see an estimate."),
      );
      return;
    }
    if (this.error.dataset.kind === "range") this.showError(""); // every field fits again
    const options = this.options();
    const e = estimateCalls(options, this.engine);
    const documents = options.corpus
      ? "your documents"
      : this.serverDocuments
        ? "the server's documents"
        : "";
    const only = options.corpus ? options.corpus_only : documents && this.defaults.corpus_only;
    const where = only ? `in ${documents}` : documents ? `on the web and in ${documents}` : "on the web";
    const llmNote =
      this.engine === "extractive"
        ? "No LLM calls: this server runs the extractive engine (keyword planning, BM25 screening, a report made only of quoted, cited sentences)."
        : `LLM calls ≈ 1 plan + ${e.subQuestions} screenings × ${options.max_research_loops} round(s)` +
          (e.parts.reflections ? ` + ${e.parts.reflections} reflection(s)` : "") +
          ` + ${e.parts.reviewers} reviewer(s)` +
          (e.parts.critic ? " + 1 critic" : "") +
          " + 1 report.";
    fill(
      this.estimateBox,
      h(
        "p",
        { class: "estimate-title" },
        "Estimate before starting ",
        h("span", { class: "muted" }, "(at most; fewer if the first round is enough)"),
      ),
      h(
        "ul",
        { class: "estimate-figures" },
        figure(`≈ ${e.searches}`, `searches ${where}`),
        figure(`≈ ${e.fetches}`, only ? "documents read" : "pages fetched"),
        figure(this.engine === "extractive" ? "0" : `≈ ${e.llm}`, "LLM calls"),
      ),
      h("p", { class: "estimate-note muted" }, llmNote),
    );
  }

  showError(message, { authProblem = false, kind = "" } = {}) {
    this.authProblem = authProblem;
    this.error.dataset.kind = kind;
    this.error.textContent = message;
    this.error.hidden = !message;
  }

  async submit() {
    if (!this.limits) return; // Ctrl+Enter while Start is disabled
    const question = this.question.value.trim();
    if (!question) {
      this.showError("Write a question first.");
      this.question.focus();
      return;
    }
    const wrong = this.validate();
    if (wrong.length) {
      this.showError(
        wrong.length === 1
          ? "One field is out of this server's range: see the message under it. Nothing was started."
          : `${wrong.length} fields are out of this server's range: see the messages under them. Nothing was started.`,
        { kind: "range" },
      );
      const first = wrong[0];
      first.closest("details")?.setAttribute("open", "");
      first.focus();
      return;
    }
    const options = this.options();
    const fewest = this.limits.reviewers?.minItems || 0;
    if (options.reviewers.length < fewest) {
      this.showError(fewest === 1 ? "Pick at least one reviewer." : `Pick at least ${fewest} reviewers.`);
      return;
    }
    if (this.corpus.checked && !options.corpus) {
      this.showError(
        this.collections.length
          ? "Choose a document collection, or untick “Search documents”."
          : "You have no document collections: untick “Search documents”, or upload documents first.",
      );
      (this.collections.length ? this.collection : this.corpus).focus();
      return;
    }
    this.showError("");
    this.checkProviders(); // a check older than a minute is asked again; the start never waits for it
    const button = this.startButton;
    button.disabled = true;
    button.textContent = "Starting…";
    try {
      const run = await api.createRun(question, options);
      remember(options, NUMBERS);
      this.question.value = "";
      this.actions.onStarted(run);
    } catch (error) {
      if (error.status === 401) {
        this.showError("Sign in again, then start the research: your question and options are kept.", {
          authProblem: true,
        });
      } else {
        this.showError(`The research could not start: ${error.message}`);
      }
    } finally {
      button.disabled = false;
      button.textContent = "Start research";
    }
  }
}

/** The select's first line when no collection is chosen (never a value the form sends). */
function choosePrompt() {
  return h("option", { value: "", text: "Choose a collection…", disabled: true });
}

function figure(value, label) {
  return h(
    "li",
    {},
    h("span", { class: "estimate-value", text: value }),
    h("span", { class: "estimate-label", text: label }),
  );
}
