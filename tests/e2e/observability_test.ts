/** End-to-end: request ids, the JSON request log on stdout, `/metrics` and who may read it. */
import assert from "node:assert/strict";
import { retryOnConflict } from "../../src/writes/conflict_retries.ts";
import { formatFamilies } from "../../src/observability/prometheus_text.ts";
import { RequestLog } from "../../src/observability/request_log.ts";
import { randomDoc, startTestServer } from "../_helpers.ts";
import { serverEnvironment, startServerProcess } from "../_server_process.ts";

const LOG_FIELDS = ["time", "requestId", "action", "project", "index", "status", "ms"];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The samples of a scrape, by name and labels as written (`quire_docs{project="default"}`). */
async function scrape(base: string, headers: Record<string, string> = {}): Promise<Map<string, number>> {
  const response = await fetch(`${base}/metrics`, { headers });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

Deno.test("every response carries x-request-id: the client's when usable, a new UUID otherwise", async () => {
  await using server = await startTestServer();
  const base = server.url.replace("/manage", "");
  const answers = [
    await server.call({ action: "listIndexes" }, { "x-request-id": "trace-42/a.b" }),
    await server.call({ action: "getIndex", indexName: "none" }, { "x-request-id": "trace-43" }),
    await fetch(`${base}/nowhere`, { headers: { "x-request-id": "trace-44" } }),
    await fetch(`${base}/healthz`, { headers: { "x-request-id": "trace-45" } }),
    await fetch(`${base}/readyz`, { headers: { "x-request-id": "trace-46" } }),
    await fetch(`${base}/metrics`, { headers: { "x-request-id": "trace-47" } }),
  ];
  assert.deepEqual(answers.map((response) => response.status), [200, 404, 404, 200, 200, 200]);
  assert.deepEqual(
    answers.map((response) => response.headers.get("x-request-id")),
    ["trace-42/a.b", "trace-43", "trace-44", "trace-45", "trace-46", "trace-47"],
  );
  for (const response of answers) {
    assert.match(response.headers.get("server-timing") ?? "", /^app;dur=\d+\.\d\d$/, "the server's own time");
  }
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
    // Without a key, the body is never read: nothing of it is known to the log.
    { action: "unknown", project: undefined, index: undefined, status: 403 },
    { action: "healthz", project: undefined, index: undefined, status: 200 },
  ]);
  assert.equal(lines[2].requestId, "mine-1");
  assert.equal(new Set(lines.map((line) => line.requestId)).size, 4);
});

Deno.test("/metrics counts requests, their durations, embedded texts, and indexes and documents per project", async () => {
  await using server = await startTestServer();
  const base = server.url.replace("/manage", "");
  const before = await scrape(base);
  assert.equal(before.get('quire_indexes{project="default"}'), 0);
  assert.equal(before.get('quire_docs{project="default"}'), 0);
  assert.equal(before.get("quire_kv_commit_conflicts_total"), 0);
  assert.equal(before.get("quire_kv_commit_retries_total"), 0);

  await server.ok({ action: "createIndex", indexName: "a", docs: [randomDoc(), randomDoc(), randomDoc()] });
  await server.ok({ action: "createIndex", indexName: "b", modelId: "svc-mediumlm", docs: [randomDoc()] });
  await server.ok({ action: "addDocs", indexName: "a", docs: [randomDoc(), randomDoc()] });
  await server.ok({ action: "getIndex", indexName: "a" });
  await server.ok({ action: "getIndex", indexName: "a" });
  await (await server.call({ action: "getIndex", indexName: "missing" })).body?.cancel();
  await (await server.call({ action: "nonsense" })).body?.cancel();

  const after = await scrape(base);
  assert.equal(after.get('quire_requests_total{action="createIndex",status="200"}'), 2);
  assert.equal(after.get('quire_requests_total{action="getIndex",status="200"}'), 2);
  assert.equal(after.get('quire_requests_total{action="getIndex",status="404"}'), 1);
  assert.equal(after.get('quire_requests_total{action="unknown",status="400"}'), 1);
  assert.equal(after.get('quire_requests_total{action="metrics",status="200"}'), 1);
  assert.equal(after.get('quire_request_duration_seconds_count{action="getIndex"}'), 3);
  assert.equal(after.get('quire_request_duration_seconds_bucket{action="getIndex",le="+Inf"}'), 3);
  assert.ok(after.get('quire_request_duration_seconds_bucket{action="getIndex",le="0.001"}')! <= 3);
  assert.ok(after.get('quire_request_duration_seconds_sum{action="addDocs"}')! > 0);
  // The default model embeds 5 documents; the warm-up at start embeds nothing.
  assert.equal(after.get('quire_docs_embedded_total{model="svc-minilm"}'), 5);
  assert.equal(after.get('quire_docs_embedded_total{model="svc-mediumlm"}'), 1);
  assert.ok(after.get('quire_embedding_seconds_total{model="svc-minilm"}')! > 0);
  assert.equal(after.get('quire_indexes{project="default"}'), 2);
  assert.equal(after.get('quire_docs{project="default"}'), 6);
});

Deno.test("/metrics shows the process's memory: its RSS, the JavaScript heap and the memory outside it", async () => {
  await using server = await startTestServer();
  const metrics = await scrape(server.url.replace("/manage", ""));
  const rss = metrics.get("quire_process_resident_memory_bytes")!;
  const heapTotal = metrics.get('quire_heap_bytes{kind="total"}')!;
  const heapUsed = metrics.get('quire_heap_bytes{kind="used"}')!;
  const external = metrics.get("quire_external_memory_bytes")!;
  assert.ok(rss > 16 * 1024 * 1024, `RSS ${rss}`);
  assert.ok(heapUsed > 0 && heapUsed <= heapTotal, `heap ${heapUsed} of ${heapTotal}`);
  assert.ok(heapTotal < rss && external > 0, `heap ${heapTotal}, external ${external}, RSS ${rss}`);
});

Deno.test("/metrics counts KV commits that lost a race, and the tries after them", async () => {
  await using server = await startTestServer();
  const { kv, metrics } = server.service.context;
  // Another writer changes the record between this write's read and its commit, once.
  let raced = false;
  const result = await retryOnConflict({ indexName: "contested", metrics }, async () => {
    const entry = await kv.get(["contested"]);
    if (!raced) {
      raced = true;
      await kv.set(["contested"], "the other writer");
    }
    return (await kv.atomic().check(entry).set(["contested"], "this writer").commit()).ok ? "written" : undefined;
  });
  assert.equal(result, "written");
  const samples = await scrape(server.url.replace("/manage", ""));
  assert.equal(samples.get("quire_kv_commit_conflicts_total"), 1);
  assert.equal(samples.get("quire_kv_commit_retries_total"), 1);
});

Deno.test("with METRICS_TOKEN set, /metrics needs it as a bearer token, also from loopback", async () => {
  const token = "metrics-token-0123456789";
  await using server = await startTestServer({ env: { METRICS_TOKEN: token } });
  const base = server.url.replace("/manage", "");
  const refused: Record<string, string>[] = [
    {},
    { authorization: "Bearer wrong-token-0123456789" },
    { authorization: token },
  ];
  for (const headers of refused) {
    const response = await fetch(`${base}/metrics`, { headers });
    assert.equal(response.status, 401);
    assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer/);
    assert.ok(!(await response.text()).includes(token));
  }
  const samples = await scrape(base, { authorization: `Bearer ${token}` });
  assert.equal(samples.get('quire_requests_total{action="metrics",status="401"}'), 3);
});

Deno.test("without METRICS_TOKEN, /metrics is not found for clients beyond loopback", async (t) => {
  const address = Deno.networkInterfaces().find((i) => i.family === "IPv4" && !i.address.startsWith("127."));
  if (address === undefined) {
    await t.step({ name: "no non-loopback IPv4 interface here", ignore: true, fn: () => {} });
    return;
  }
  await using server = await startTestServer({ env: { HOSTNAME: "0.0.0.0" } });
  const { port } = server.service.addr;
  const response = await fetch(`http://${address.address}:${port}/metrics`);
  assert.equal(response.status, 404);
  assert.deepEqual(await response.json(), { error: 'Not found: "/metrics"; the API is POST /manage' });
  const local = await fetch(`http://127.0.0.1:${port}/metrics`);
  assert.equal(local.status, 200);
  await local.body?.cancel();
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

Deno.test("label values are escaped in the exposition text", () => {
  const text = formatFamilies([{
    name: "quire_docs_embedded_total",
    type: "counter",
    help: "Texts",
    samples: [{ labels: { model: 'a"b\\c\nd' }, value: 3 }, { suffix: "_x", value: Infinity }],
  }]);
  assert.equal(
    text,
    "# HELP quire_docs_embedded_total Texts\n# TYPE quire_docs_embedded_total counter\n" +
      'quire_docs_embedded_total{model="a\\"b\\\\c\\nd"} 3\nquire_docs_embedded_total_x +Inf\n',
  );
});
