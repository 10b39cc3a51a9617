// LangGraph's JS SDK (@langchain/langgraph-sdk) against a deepresearch server: node THIS SDK_ENTRY URL QUESTION
// prints one JSON line with what the Python test checks (tests/test_agent_protocol_js.py).
import { pathToFileURL } from "node:url";

const [entry, apiUrl, question] = process.argv.slice(2);
const { Client } = await import(pathToFileURL(entry).href);
const client = new Client({ apiUrl, apiKey: null });

const assistants = await client.assistants.search({ graphId: "deepresearch" });
const thread = await client.threads.create({ metadata: { client: "js" } });
const events = [];
const updates = [];
for await (const part of client.runs.stream(thread.thread_id, "deepresearch", {
  input: { question },
  streamMode: ["updates", "custom"],
})) {
  events.push(part.event);
  if (part.event === "updates") updates.push(Object.keys(part.data)[0]);
  if (events.length > 5000) throw new Error("stream too long");
}
const state = await client.threads.getState(thread.thread_id);
const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
const runs = await client.runs.list(thread.thread_id);

// a background run on a new thread, cancelled at once and waited for
const second = await client.threads.create();
const run = await client.runs.create(second.thread_id, "deepresearch", { input: { question } });
await client.runs.cancel(second.thread_id, run.run_id, true, "interrupt");
const cancelled = await client.runs.get(second.thread_id, run.run_id);

console.log(
  JSON.stringify({
    assistants: assistants.map((a) => a.graph_id),
    first_event: events[0],
    last_event: events[events.length - 1],
    updates,
    custom: events.filter((e) => e === "custom").length,
    verified: Boolean(state.values.report && state.values.report.verified),
    stages_in_history: history.map((h) => h.metadata.stage).filter(Boolean),
    statuses: runs.map((r) => r.status),
    cancelled: cancelled.status,
  }),
);
