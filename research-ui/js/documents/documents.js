// "My documents": the user's uploaded collections (GET /api/collections, kind "uploaded") with their
// documents, uploads into a collection (new or existing; each file its own PUT and its own line), and
// deleting a document. What a name or a file may be is the server's rule: its messages are shown as they are.

import { api } from "../core/api.js";
import { $, bytes, fill, h, plural, setText } from "../core/dom.js";

/**
 * @typedef {{name: string, kind: "server"|"uploaded", documents: number|null}} Collection
 * @typedef {{name: string, size: number}} Document
 * @typedef {{bytes: number, max_bytes: number, collections: number, max_collections: number}} Storage
 * @typedef {{onChanged: (collections: Collection[]) => void, onUse: (name: string) => void}} DocumentsHooks
 */

export class DocumentsView {
  /** @param {DocumentsHooks} hooks */
  constructor(hooks) {
    this.hooks = hooks;
    this.name = /** @type {HTMLInputElement} */ ($("docs-collection"));
    this.files = /** @type {HTMLInputElement} */ ($("docs-files"));
    this.drop = $("docs-drop");
    this.error = $("docs-error");
    this.uploads = $("docs-uploads");
    this.list = $("docs-list");
    /** a newer load() supersedes an older one still waiting for the server */
    this.loadToken = 0;
    this.busy = false;
    /** @type {Collection[]} */
    this.collections = [];
    /** documents whose "Delete …?" is open ("collection/name"): a list that reloads meanwhile keeps it open */
    this.confirming = new Set();
    /** @type {Map<string, {row: HTMLElement, confirm: (asked: boolean) => void, normal: () => void}>} */
    this.rows = new Map(); // each document's row as drawn last: a click on a row a reload replaced acts on it
    /** the server's upload limits (config.json `uploads`); null: the server checks alone */
    this.limits = /** @type {{max_bytes: number, types: string[]}|null} */ (null);
    this.files.addEventListener("change", () => {
      const chosen = [...(this.files.files || [])];
      this.files.value = ""; // choosing the same file again uploads it again
      this.upload(chosen);
    });
    $("docs-upload").addEventListener("submit", (event) => event.preventDefault());
    this.name.addEventListener("input", () => this.showError(""));
    for (const type of ["dragenter", "dragover"]) {
      this.drop.addEventListener(type, (event) => {
        if (!event.dataTransfer?.types.includes("Files")) return;
        event.preventDefault(); // this element takes the drop (the browser would open the file instead)
        event.dataTransfer.dropEffect = "copy";
        this.drop.classList.add("is-over");
      });
    }
    this.drop.addEventListener("dragleave", (event) => {
      if (!this.drop.contains(/** @type {Node|null} */ (event.relatedTarget))) {
        this.drop.classList.remove("is-over");
      }
    });
    this.drop.addEventListener("drop", (event) => {
      event.preventDefault();
      this.drop.classList.remove("is-over");
      this.upload([...(event.dataTransfer?.files || [])]);
    });
    // a file dropped anywhere else would make the browser open it in place of the workbench
    for (const type of ["dragover", "drop"]) {
      document.addEventListener(type, (event) => {
        const target = /** @type {Node|null} */ (event.target);
        if (!event.dataTransfer?.types.includes("Files") || this.drop.contains(target)) return;
        event.preventDefault();
        event.dataTransfer.dropEffect = "none";
      });
    }
  }

  /** The view opens: the lines of an earlier batch are history by now (unless it is still being sent). */
  show() {
    if (!this.busy) {
      fill(this.uploads);
      this.showError("");
    }
    return this.load();
  }

  /** Ask the server for the user's collections and their documents. */
  async load() {
    const token = ++this.loadToken;
    let collections;
    let documents;
    let storage;
    try {
      const listed = await api.collections();
      collections = /** @type {Collection[]} */ (listed.collections);
      storage = /** @type {Storage|undefined} */ (listed.storage);
      const mine = collections.filter((c) => c.kind === "uploaded");
      documents = await Promise.all(mine.map(async (c) => (await api.documents(c.name)).documents));
    } catch (error) {
      if (token !== this.loadToken) return;
      const text = `Could not list your documents: ${error.message}`;
      fill(this.list, h("p", { class: "form-error", text }));
      return;
    }
    if (token !== this.loadToken) return;
    this.collections = collections;
    this.render(collections, documents);
    this.showStorage(storage);
    this.hooks.onChanged(collections);
    // how many lists were drawn: the view has settled once it changes (its notes move the rows when drawn)
    this.list.dataset.drawn = String(Number(this.list.dataset.drawn || 0) + 1);
  }

  /** How much of the user's quota (bytes, collections) the uploads use; nothing from an older server. */
  showStorage(/** @type {Storage|undefined} */ storage) {
    const note = $("docs-storage");
    note.hidden = !storage;
    if (!storage) return;
    const share = storage.max_bytes ? Math.round((100 * storage.bytes) / storage.max_bytes) : 0;
    setText(
      note,
      `Your documents use ${bytes(storage.bytes)} of ${bytes(storage.max_bytes)} (${share} %) and ` +
        `${storage.collections} of ${plural(storage.max_collections, "collection")}.`,
    );
  }

  /**
   * @param {Collection[]} collections
   * @param {Document[][]} documents the uploaded collections' documents, in their order
   */
  render(collections, documents) {
    const mine = collections.filter((c) => c.kind === "uploaded");
    const server = collections.filter((c) => c.kind === "server").map((c) => c.name);
    fill(
      $("docs-collection-names"),
      mine.map((c) => h("option", { value: c.name })),
    );
    $("docs-empty").hidden = mine.length > 0;
    const serverNote = $("docs-server");
    serverNote.hidden = server.length === 0;
    setText(
      serverNote,
      server.length
        ? `This server also offers ${server.length === 1 ? "the collection" : "the collections"} ` +
            `${server.join(", ")}: anyone on it may search ${server.length === 1 ? "it" : "them"}, ` +
            "and only its operator changes them."
        : "",
    );
    fill(
      this.list,
      mine.map((c, i) => this.collectionCard(c.name, documents[i])),
    );
  }

  /** @param {string} name @param {Document[]} documents */
  collectionCard(name, documents) {
    const total = documents.reduce((sum, d) => sum + d.size, 0);
    return h(
      "section",
      { class: "doc-collection", dataset: { collection: name }, "aria-label": `Collection ${name}` },
      h(
        "header",
        { class: "doc-collection-head" },
        h("h3", { text: name }),
        h("span", { class: "muted", text: `${plural(documents.length, "document")} · ${bytes(total)}` }),
        h("span", { class: "spacer" }),
        h("button", {
          type: "button",
          class: "btn btn-quiet btn-small",
          text: "Add files",
          on: { click: () => this.addTo(name) },
        }),
        h("button", {
          type: "button",
          class: "btn btn-small",
          text: "Search it",
          title: `Start a research that searches “${name}”`,
          on: { click: () => this.hooks.onUse(name) },
        }),
      ),
      h(
        "ul",
        { class: "doc-list" },
        documents.map((d) => this.documentRow(name, d)),
      ),
    );
  }

  /** @param {string} collection @param {Document} doc */
  documentRow(collection, doc) {
    const row = h("li", { class: "doc", dataset: { document: doc.name } });
    const key = `${collection}/${doc.name}`;
    // the row as drawn last: a click that lands on a row the list's reload has just replaced acts on the
    // one shown (else the question it asks is drawn where nobody sees it)
    const shown = () => this.rows.get(key) ?? { row, confirm, normal };
    const normal = () => {
      this.confirming.delete(key);
      fill(
        row,
        h("span", { class: "doc-name", text: doc.name, title: doc.name }),
        h("span", { class: "doc-size muted", text: bytes(doc.size) }),
        h("button", {
          type: "button",
          class: "btn btn-quiet btn-small doc-delete",
          text: "Delete",
          "aria-label": `Delete ${doc.name}`,
          on: { click: () => shown().confirm(true) },
        }),
      );
    };
    // asked in the row, not in a browser dialog: the choice stays next to what it deletes
    const confirm = (/** @type {boolean} */ asked) => {
      this.confirming.add(key);
      const keep = h("button", {
        type: "button",
        class: "btn btn-small",
        text: "Keep",
        on: { click: () => shown().normal() },
      });
      fill(
        row,
        h("span", { class: "doc-confirm", text: `Delete ${doc.name}? Runs can no longer search it.` }),
        h("button", {
          type: "button",
          class: "btn btn-small btn-danger",
          text: "Delete",
          "aria-label": `Yes, delete ${doc.name}`,
          on: { click: () => this.remove(collection, doc, shown().row) },
        }),
        keep,
      );
      if (asked) keep.focus(); // a reload redraws the question without moving the focus
    };
    this.rows.set(key, { row, confirm, normal });
    if (this.confirming.has(key)) confirm(false);
    else normal();
    return row;
  }

  /** @param {string} collection @param {Document} doc @param {HTMLElement} row */
  async remove(collection, doc, row) {
    this.confirming.delete(`${collection}/${doc.name}`);
    for (const button of /** @type {NodeListOf<HTMLButtonElement>} */ (row.querySelectorAll("button"))) {
      button.disabled = true;
    }
    try {
      await api.deleteDocument(collection, doc.name);
    } catch (error) {
      // already gone (another tab) is what the user wanted; anything else is shown where it happened
      if (error.status !== 404) {
        const text = `Could not delete ${doc.name}: ${error.message}`;
        fill(row, h("span", { class: "doc-problem", text }));
        return;
      }
    }
    await this.load();
    $("docs-list-title").focus();
  }

  /** "Add files" on a collection: the upload goes there. */
  addTo(name) {
    this.name.value = name;
    this.showError("");
    $("docs-upload").scrollIntoView({ block: "start", behavior: "smooth" });
    this.files.focus();
  }

  /**
   * Upload files one after another into the collection named in the field, each with its own line: a
   * refused file says the server's reason and the rest go on. A refused collection name stops the batch
   * (every file would be refused for it) and is shown at the field.
   * @param {File[]} files
   */
  async upload(files) {
    if (!files.length) return;
    if (this.busy) {
      this.showError("Files are still being sent: add more when they are done.");
      return;
    }
    const name = this.name.value.trim();
    if (!name) {
      this.showError("Name the collection first: a new name creates it.");
      this.name.focus();
      return;
    }
    this.showError("");
    this.busy = true;
    this.files.disabled = true;
    const lines = files.map((file) => uploadLine(file));
    fill(this.uploads, lines.map((line) => line.row));
    let landed = 0;
    try {
      for (const [i, file] of files.entries()) {
        const line = lines[i];
        const problem = this.fileProblem(file);
        if (problem) {
          line.refused(problem);
          continue;
        }
        line.start();
        try {
          const stored = await api.uploadDocument(name, file, (fraction) => line.progress(fraction));
          line.done(stored);
          landed += 1;
        } catch (error) {
          line.refused(error.message);
          // signed out (the sign-in dialog is up) or a refused name: every other file would fail alike
          const stop = error.status === 401 || refusedName(error);
          if (refusedName(error)) {
            this.showError(`The collection name “${name}” is refused: ${nameReason(error)}.`);
            this.name.focus();
          }
          if (stop) {
            for (const rest of lines.slice(i + 1)) rest.skipped();
            break;
          }
        }
      }
    } finally {
      this.busy = false;
      this.files.disabled = false;
    }
    if (landed) await this.load();
  }

  /**
   * The server's upload limits: the file picker offers its types and the hint says its size limit; a file
   * outside them is refused on its line before anything is sent.
   * @param {{max_bytes: number, types: string[]}} limits
   */
  configure(limits) {
    this.limits = limits;
    this.files.accept = limits.types.join(",");
    setText(
      $("docs-files-limits"),
      `Types: ${limits.types.join(" ")}; at most ${bytes(limits.max_bytes)} each.`,
    );
  }

  /** Why the server would refuse this file, said before sending it (null: send it). */
  fileProblem(file) {
    if (!this.limits) return null;
    const dot = file.name.lastIndexOf(".");
    const type = dot === -1 ? "" : file.name.slice(dot).toLowerCase();
    if (!this.limits.types.includes(type)) {
      return `'${file.name}': only ${this.limits.types.join(", ")} documents can be searched`;
    }
    if (file.size > this.limits.max_bytes) {
      return `${bytes(file.size)} is more than this server's limit of ${this.limits.max_bytes} bytes`;
    }
    return null;
  }

  /** Signed out: nothing of the last user's documents stays on the page. */
  reset() {
    this.loadToken += 1;
    this.collections = [];
    this.name.value = "";
    this.showError("");
    fill(this.uploads);
    fill(this.list);
    fill($("docs-collection-names"));
    $("docs-empty").hidden = true;
    $("docs-server").hidden = true;
  }

  showError(message) {
    setText(this.error, message);
    this.error.hidden = !message;
  }
}

/** @param {import("../core/api.js").ApiError} error */
function refusedName(error) {
  return error.status === 422 && error.errors.some((e) => e.loc?.[0] === "path" && e.loc?.[1] === "name");
}

/** @param {import("../core/api.js").ApiError} error */
function nameReason(error) {
  const named = error.errors.find((e) => e.loc?.[0] === "path" && e.loc?.[1] === "name");
  return (named?.msg || error.message).replace(/\.$/, "");
}

/** One file's line in the upload list: waiting → sending (with progress) → stored, or refused and why. */
function uploadLine(file) {
  const status = h("span", { class: "upload-status muted", text: "waiting" });
  const bar = /** @type {HTMLProgressElement} */ (
    h("progress", { max: "1", value: "0", "aria-label": `Upload of ${file.name}`, hidden: true })
  );
  const row = h(
    "li",
    { class: "upload", dataset: { file: file.name, state: "waiting" } },
    h("span", { class: "upload-name", text: file.name, title: file.name }),
    h("span", { class: "upload-size muted", text: bytes(file.size) }),
    bar,
    status,
  );
  const state = (name, text) => {
    row.dataset.state = name;
    setText(status, text);
  };
  return {
    row,
    start: () => {
      bar.hidden = false;
      state("sending", "sending…");
    },
    progress: (fraction) => {
      bar.value = fraction;
      setText(status, `sending… ${Math.round(fraction * 100)}%`);
    },
    /** @param {{name: string, size: number}} stored */
    done: (stored) => {
      bar.hidden = true;
      state("done", `uploaded (${bytes(stored.size)})`);
    },
    refused: (message) => {
      bar.hidden = true;
      state("refused", `refused: ${message}`);
    },
    skipped: () => state("skipped", "not sent"),
  };
}
