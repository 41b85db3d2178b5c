/** End-to-end: request ids and the JSON request log on stdout. */
import assert from "node:assert/strict";
import { RequestLog } from "../src/observability/request_log.ts";
import { startTestServer } from "./_helpers.ts";
import { serverEnvironment, startServerProcess } from "./_server_process.ts";

const LOG_FIELDS = ["time", "requestId", "action", "project", "index", "status", "ms"];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

Deno.test("every response carries x-request-id: the client's when usable, a new UUID otherwise", async () => {
  const server = await startTestServer();
  const base = server.url.replace("/manage", "");
  try {
    const answers = [
      await server.call({ action: "listIndexes" }, { "x-request-id": "trace-42/a.b" }),
      await server.call({ action: "getIndex", indexName: "none" }, { "x-request-id": "trace-43" }),
      await fetch(`${base}/nowhere`, { headers: { "x-request-id": "trace-44" } }),
      await fetch(`${base}/healthz`, { headers: { "x-request-id": "trace-45" } }),
      await fetch(`${base}/readyz`, { headers: { "x-request-id": "trace-46" } }),
    ];
    assert.deepEqual(answers.map((response) => response.status), [200, 404, 404, 200, 200]);
    assert.deepEqual(
      answers.map((response) => response.headers.get("x-request-id")),
      ["trace-42/a.b", "trace-43", "trace-44", "trace-45", "trace-46"],
    );
    const generated = [
      await server.call({ action: "listIndexes" }),
      await server.call({ action: "listIndexes" }, { "x-request-id": "x".repeat(129) }),
      await server.call({ action: "listIndexes" }, { "x-request-id": "has space" }),
      await server.call({ action: "listIndexes" }, { "x-request-id": "" }),
    ];
    const ids = generated.map((response) => response.headers.get("x-request-id") ?? "");
    for (const id of ids) assert.match(id, UUID);
    assert.equal(new Set(ids).size, ids.length);
    await Promise.all([...answers, ...generated].map((response) => response.body?.cancel()));
  } finally {
    await server.close();
  }
});

Deno.test("each request writes one JSON line to stdout, without the key or any document text", async () => {
  let stdout = "";
  const server = await startServerProcess(await serverEnvironment(), "", { onStdout: (text) => stdout += text });
  const base = server.url.replace("/manage", "");
  const secret = "unmistakable-secret-text";
  const created = await server.call({
    action: "createIndex",
    indexName: "faq",
    docs: [{ id: "1", text: `${secret} one`, metadata: { note: secret } }],
  });
  assert.equal(await created.json(), true);
  const read = await server.call({ action: "getDocs", indexName: "faq" });
  assert.match(await read.text(), new RegExp(secret));
  const missing = await fetch(server.url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-service-version": "v1", "x-request-id": "mine-1" },
    body: JSON.stringify({ action: "getIndex", projectId: "default", indexName: "nope" }),
  });
  assert.equal(missing.status, 403);
  await missing.body?.cancel();
  await (await fetch(`${base}/healthz`)).body?.cancel();
  assert.equal(await server.stop("SIGTERM"), 0);

  assert.ok(!stdout.includes(secret), "no document text in the log");
  assert.equal(stdout.split(server.key).length, 2, "the key appears once: where it was printed at first start");
  const lines = stdout.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line));
  assert.equal(lines.length, 4);
  for (const line of lines) {
    for (const key of Object.keys(line)) assert.ok(LOG_FIELDS.includes(key), `unexpected log field "${key}"`);
    assert.ok(!Number.isNaN(Date.parse(line.time)));
    assert.equal(typeof line.ms, "number");
    assert.equal(typeof line.requestId, "string");
  }
  const brief = lines.map(({ action, project, index, status }) => ({ action, project, index, status }));
  assert.deepEqual(brief, [
    { action: "createIndex", project: "default", index: "faq", status: 200 },
    { action: "getDocs", project: "default", index: "faq", status: 200 },
    { action: "getIndex", project: "default", index: "nope", status: 403 },
    { action: "healthz", project: undefined, index: undefined, status: 200 },
  ]);
  assert.equal(lines[2].requestId, "mine-1");
  assert.equal(new Set(lines.map((line) => line.requestId)).size, 4);
});

Deno.test("the request log writes lines in batches, one write at a time, and all of them by flush", async () => {
  const path = await Deno.makeTempFile();
  const file = await Deno.open(path, { write: true });
  let writes = 0;
  let inFlight = 0;
  let mostInFlight = 0;
  const log = new RequestLog({
    async write(bytes) {
      writes++;
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      try {
        return await file.write(bytes);
      } finally {
        inFlight--;
      }
    },
  });
  for (let i = 0; i < 5000; i++) {
    log.write({ requestId: `r${i}`, action: "getIndex", project: "p", index: "i", status: 200, ms: 0.1234567 });
    if (i % 500 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  await log.flush();
  file.close();
  const lines = (await Deno.readTextFile(path)).trimEnd().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(lines.map((line) => line.requestId), Array.from({ length: 5000 }, (_, i) => `r${i}`));
  assert.equal(lines[0].ms, 0.123);
  assert.equal(mostInFlight, 1);
  assert.ok(writes <= 50, `${writes} writes for 5000 lines`);
});
