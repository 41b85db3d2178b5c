/** End-to-end: `options.wait: false` answers 202 and runs the write from the Deno KV queue, across a crash too. */
import assert from "node:assert/strict";
import { assertJsonError, startServerWithBrokenMediumModel, startTestServer, type TestServer } from "../_helpers.ts";
import { serverEnvironment, startServerProcess } from "../_server_process.ts";

interface IndexView {
  status: string;
  docCount: number;
  version: string;
  progress?: { done: number; total: number };
  error?: string;
}

async function waitForStatus(
  read: () => Promise<IndexView>,
  done: (view: IndexView) => boolean,
): Promise<IndexView> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const view = await read();
    if (done(view)) return view;
    if (Date.now() > deadline) throw new Error(`Still ${JSON.stringify(view)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function getIndex(server: TestServer, indexName: string): Promise<IndexView> {
  return server.ok<IndexView>({ action: "getIndex", indexName });
}

const docs = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({ id: `${prefix}${i}`, text: `river storm number ${i}` }));

Deno.test("createIndex with wait: false answers 202 Building, then the index becomes Ready with its docs", async () => {
  await using server = await startTestServer();
  const response = await server.call({
    action: "createIndex",
    indexName: "queued",
    docs: docs("a", 300),
    options: { wait: false },
  });
  assert.equal(response.status, 202);
  const accepted = await response.json();
  assert.equal(accepted.status, "Building");
  assert.deepEqual(accepted.progress, { done: 0, total: 300 });
  assert.equal(accepted.docCount, 0);
  const ready = await waitForStatus(() => getIndex(server, "queued"), (view) => view.status === "Ready");
  assert.equal(ready.docCount, 300);
  assert.equal(ready.progress, undefined);
  const hits = await server.ok<{ total: number }>({
    action: "search",
    indexName: "queued",
    query: "storm",
    mode: "fulltext",
  });
  assert.equal(hits.total, 300);
  const taken = await server.call({ action: "createIndex", indexName: "queued", docs: [], options: { wait: false } });
  await assertJsonError(taken, 409, /already exists/);
});

Deno.test("addDocs with wait: false shows Updating, keeps the old state searchable, then applies the write", async () => {
  await using server = await startTestServer();
  await server.ok({ action: "createIndex", indexName: "live", docs: docs("old", 3) });
  const response = await server.call({
    action: "addDocs",
    indexName: "live",
    docs: docs("new", 600),
    options: { wait: false, upsert: false },
  });
  assert.equal(response.status, 202);
  assert.equal((await response.json()).status, "Updating");
  const during = await server.ok<{ total: number }>({
    action: "search",
    indexName: "live",
    query: "storm",
    mode: "fulltext",
  });
  assert.ok(during.total === 3 || during.total === 603, "the old state, or the whole new one, never half");
  const again = await server.call({ action: "addDocs", indexName: "live", docs: [], options: { wait: false } });
  const busy = await getIndex(server, "live");
  if (busy.status === "Updating") await assertJsonError(again, 409, /already updating/);
  const ready = await waitForStatus(() => getIndex(server, "live"), (view) => view.status === "Ready");
  assert.equal(ready.docCount, 603);
});

Deno.test("a queued write that cannot embed shows Failed with an error, and the next write clears it", async () => {
  await using server = await startServerWithBrokenMediumModel();
  const originalError = console.error;
  console.error = () => {};
  try {
    const response = await server.call({
      action: "createIndex",
      indexName: "doomed",
      docs: docs("d", 5),
      modelId: "svc-mediumlm",
      options: { wait: false },
    });
    assert.equal(response.status, 202);
    const failed = await waitForStatus(() => getIndex(server, "doomed"), (view) => view.status !== "Building");
    assert.equal(failed.status, "Failed");
    assert.match(failed.error!, /Cannot embed with model "svc-mediumlm"/);
    assert.equal(failed.docCount, 0);
    await server.ok({ action: "deleteDocs", indexName: "doomed", docIds: ["nothing"] });
    assert.equal((await getIndex(server, "doomed")).status, "Ready", "a later write clears the failure");
  } finally {
    console.error = originalError;
  }
});

Deno.test("a queued write survives a kill -9 of the server and finishes after the restart", async () => {
  const env = await serverEnvironment();
  let server = await startServerProcess(env);
  const key = server.key;
  try {
    await (await server.call({ action: "createIndex", indexName: "crash", docs: [] })).json();
    const response = await server.call({
      action: "addDocs",
      indexName: "crash",
      docs: docs("c", 4000),
      options: { wait: false },
    });
    assert.equal(response.status, 202);
    await response.body?.cancel();
    assert.notEqual(await server.stop("SIGKILL"), 0);

    server = await startServerProcess(env, key);
    const read = async () => await (await server.call({ action: "getIndex", indexName: "crash" })).json();
    const ready = await waitForStatus(read, (view) => view.status === "Ready");
    assert.equal(ready.docCount, 4000);
    assert.equal(ready.version, "2", "the write landed exactly once");
  } finally {
    await server.stop();
  }
});
