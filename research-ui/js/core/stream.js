// One run's event stream (SSE). The server sends `id: <seq>`, so the browser's own reconnects resume with
// Last-Event-ID; when the browser gives up (the connection was refused) we reopen with ?after=<last seq>.
// The server closes the stream after the terminal `end` of a stopped run: a drop right after `end` is
// that normal close, not a network problem.

import { urls } from "./api.js";

/** Every event type of the contract (events.js): an EventSource hands over only the types listened to. */
const TYPES = [
  "run_status",
  "tool_call",
  "tool_result",
  "checkpoint",
  "graph_checkpoint",
  "message",
  "report_delta",
  "error",
  "end",
];
const MAX_BACKOFF_MS = 15_000;

/** @typedef {"connecting"|"open"|"reconnecting"|"closed"} StreamState */

export class RunStream {
  /**
   * @param {string} runId
   * @param {{onEvent: (data: any) => void, onState: (state: StreamState) => void, onClosed: () => void}} handlers
   */
  constructor(runId, handlers) {
    this.runId = runId;
    this.handlers = handlers;
    /** @type {EventSource|null} */
    this.source = null;
    this.lastSeq = 0;
    this.lastType = "";
    this.received = 0;
    this.opened = false;
    this.final = false;
    this.backoff = 1000;
    this.timer = 0;
    /** @type {StreamState} */
    this.state = "closed";
  }

  /**
   * Open (or reopen) the stream after `after` (0: replay everything). `final`: the run is known to have
   * stopped, so a close without any new event just means there is nothing more to read.
   */
  open(after = 0, { final = false } = {}) {
    this.stop();
    this.lastSeq = Math.max(this.lastSeq, after);
    const source = new EventSource(urls.events(this.runId, this.lastSeq));
    this.source = source;
    this.lastType = "";
    this.received = 0;
    this.opened = false;
    this.final = final;
    this.setState("connecting");
    source.addEventListener("open", () => {
      this.opened = true;
      this.backoff = 1000;
      this.setState("open");
    });
    for (const type of TYPES) {
      source.addEventListener(type, (event) => this.receive(source, event));
    }
  }

  get isOpen() {
    return this.source !== null;
  }

  /** Stop listening for good (the view moved to another run). */
  close() {
    this.stop();
    this.setState("closed");
  }

  stop() {
    clearTimeout(this.timer);
    this.timer = 0;
    if (this.source) {
      this.source.close();
      this.source = null;
    }
  }

  /** @param {EventSource} source @param {Event} event */
  receive(source, event) {
    if (source !== this.source) return;
    const isServerEvent = event instanceof MessageEvent && typeof event.data === "string";
    if (!isServerEvent) {
      this.connectionError(source);
      return;
    }
    if (this.state !== "open") this.setState("open");
    const seq = Number(event.lastEventId);
    if (Number.isFinite(seq) && seq > this.lastSeq) this.lastSeq = seq;
    this.lastType = event.type;
    this.received += 1;
    let data;
    try {
      data = JSON.parse(event.data);
    } catch {
      return;
    }
    this.handlers.onEvent(data);
  }

  /** @param {EventSource} source */
  connectionError(source) {
    if (this.lastType === "end" || (this.final && this.opened && this.received === 0)) {
      // the server closed the stream after the run's terminal event (or had nothing more to send); a
      // stream that never opened was not answered at all: that is the network, and it is retried
      this.stop();
      this.setState("closed");
      this.handlers.onClosed();
      return;
    }
    this.setState("reconnecting");
    if (source.readyState === EventSource.CLOSED) {
      // the browser will not retry on its own (e.g. the server answered with an error): we do
      this.stop();
      const delay = this.backoff;
      this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
      this.timer = setTimeout(() => this.open(this.lastSeq, { final: this.final }), delay);
    }
  }

  /** @param {StreamState} state */
  setState(state) {
    if (this.state === state) return;
    this.state = state;
    this.handlers.onState(state);
  }
}
