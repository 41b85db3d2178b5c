/**
 * End-to-end: webhooks on job completion. A queued write with `options.notify` POSTs a signed event to a real receiver
 * on loopback when its job ends, retries a receiver that fails, is refused at request time when its URL may not be
 * sent to, and is delivered after a kill -9 of the server between the job's end and the delivery.
 */
import assert from "node:assert/strict";
import { startServerWithBrokenMediumModel, startTestServer, type TestServer } from "../_helpers.ts";
import { metricIn, metricsText, serverEnvironment, startServerProcess } from "../_server_process.ts";
import { createProject } from "../../src/projects/project_store.ts";
import { Metrics } from "../../src/observability/metrics.ts";
import { BackgroundTasks } from "../../src/concurrency/background_tasks.ts";
import { WebhookDeliverer } from "../../src/webhooks/webhook_deliverer.ts";
import { jobEndEvent } from "../../src/webhooks/job_end_delivery.ts";
import { deliveryMutation, listDeliveries, type WebhookDelivery } from "../../src/storage/webhook_outbox.ts";
import type { IndexRecord } from "../../src/storage/index_records.ts";
import { QuireClient } from "../../client.ts";

/** One POST that the receiver got. */
interface Delivery {
  body: string;
  signature: string;
  contentType: string;
  /** The status the receiver answered; 0 while it has not answered yet. */
  status: number;
}

/**
 * A real HTTP receiver on loopback that records every POST as it arrives, and answers what `answer` says for the n-th
 * (from 1), when it says it.
 */
function startReceiver(answer: (n: number) => number | Promise<number> = () => 204) {
  const deliveries: Delivery[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const delivery: Delivery = {
      body: await request.text(),
      signature: request.headers.get("quire-signature") ?? "",
      contentType: request.headers.get("content-type") ?? "",
      status: 0,
    };
    deliveries.push(delivery);
    delivery.status = await answer(deliveries.length);
    return new Response(null, { status: delivery.status });
  });
  const host = `127.0.0.1:${server.addr.port}`;
  return {
    host,
    url: `http://${host}/hooks/quire`,
    deliveries,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** Waits until `condition` holds, for at most `ms`. */
async function until(condition: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Still waiting after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Verifies a `Quire-Signature` header as a receiver would (the README's code): the HMAC-SHA256 of `"<t>.<body>"`,
 * compared by WebCrypto in constant time, and `t` at most `toleranceSeconds` old.
 */
async function verifySignature(secret: string, header: string, body: string, toleranceSeconds = 300) {
  const fields = new Map(header.split(",").map((part) => part.split("=", 2) as [string, string]));
  const t = Number(fields.get("t"));
  const v1 = fields.get("v1") ?? "";
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceSeconds) return false;
  if (!/^[0-9a-f]{64}$/.test(v1)) return false;
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "verify",
  ]);
  const mac = new Uint8Array(v1.match(/../g)!.map((byte) => parseInt(byte, 16)));
  return await crypto.subtle.verify("HMAC", key, mac, encoder.encode(`${t}.${body}`));
}

const docs = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({ id: `${prefix}${i}`, text: `confidential storm report ${i}` }));

async function secretOf(server: TestServer): Promise<string> {
  const { secret } = await server.ok<{ secret: string }>({ action: "getWebhookSecret" });
  return secret;
}

Deno.test("a queued addDocs or reembedIndex with notify POSTs one job.completed event, signed with the project's secret", async () => {
  await using receiver = startReceiver();
  await using server = await startTestServer({ env: { WEBHOOK_ALLOWED_HOSTS: receiver.host } });
  await server.ok({ action: "createIndex", indexName: "reports", docs: docs("a", 3) });
  const response = await server.call({
    action: "addDocs",
    indexName: "reports",
    docs: docs("b", 4),
    options: { wait: false, notify: { url: receiver.url } },
  });
  assert.equal(response.status, 202);
  await response.body?.cancel();
  await until(() => receiver.deliveries.length === 1);
  const [delivery] = receiver.deliveries;
  const event = JSON.parse(delivery!.body);
  assert.match(event.jobId, /^[0-9a-z]{10}-/);
  assert.ok(Math.abs(Date.parse(event.at) - Date.now()) < 10_000, event.at);
  assert.deepEqual(event, {
    type: "job.completed",
    projectId: "default",
    indexName: "reports",
    jobId: event.jobId,
    status: "Ready",
    docCount: 7,
    at: event.at,
  });
  assert.doesNotMatch(delivery!.body, /confidential|storm/, "no document text");
  assert.equal(delivery!.contentType, "application/json");
  assert.match(delivery!.signature, /^t=\d+,v1=[0-9a-f]{64}$/);
  const secret = await secretOf(server);
  assert.match(secret, /^whsec_[A-Za-z0-9_-]{43}$/);
  assert.equal(await secretOf(server), secret, "created once, then the same");
  assert.ok(await verifySignature(secret, delivery!.signature, delivery!.body));
  assert.ok(!await verifySignature(`${secret}x`, delivery!.signature, delivery!.body), "another secret fails");
  assert.ok(!await verifySignature(secret, delivery!.signature, `${delivery!.body} `), "another body fails");
  const t = Number(/t=(\d+)/.exec(delivery!.signature)![1]);
  assert.ok(!await verifySignature(secret, delivery!.signature, delivery!.body, Date.now() / 1000 - t - 1), "old t");
  // Delivered once: nothing more arrives, and the metrics count one delivery.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  assert.equal(receiver.deliveries.length, 1);
  const metrics = await metricsText(server);
  assert.equal(metricIn(metrics, 'quire_webhook_deliveries_total{result="ok"}'), 1);
  assert.equal(metricIn(metrics, 'quire_webhook_deliveries_total{result="failed"}'), 0);

  // reembedIndex is always queued, and takes notify without wait.
  const reembed = await server.call({
    action: "reembedIndex",
    indexName: "reports",
    modelId: "svc-mediumlm",
    options: { notify: { url: receiver.url } },
  });
  assert.equal(reembed.status, 202);
  await reembed.body?.cancel();
  await until(() => receiver.deliveries.length === 2);
  const reembedded = JSON.parse(receiver.deliveries[1]!.body);
  assert.deepEqual([reembedded.type, reembedded.status, reembedded.docCount], ["job.completed", "Ready", 7]);
  assert.notEqual(reembedded.jobId, event.jobId);
  const index = await server.ok<{ model: { id: string } }>({ action: "getIndex", indexName: "reports" });
  assert.equal(index.model.id, "svc-mediumlm", "the event came after the swap");
});

Deno.test("a queued job that fails POSTs job.failed with its error", async () => {
  await using receiver = startReceiver();
  await using server = await startServerWithBrokenMediumModel({ WEBHOOK_ALLOWED_HOSTS: receiver.host });
  const originalError = console.error;
  console.error = () => {};
  try {
    const response = await server.call({
      action: "createIndex",
      indexName: "doomed",
      docs: docs("d", 3),
      modelId: "svc-mediumlm",
      options: { wait: false, notify: { url: receiver.url } },
    });
    assert.equal(response.status, 202);
    await response.body?.cancel();
    await until(() => receiver.deliveries.length === 1);
  } finally {
    console.error = originalError;
  }
  const event = JSON.parse(receiver.deliveries[0]!.body);
  assert.equal(event.type, "job.failed");
  assert.equal(event.status, "Failed");
  assert.equal(event.indexName, "doomed");
  assert.equal(event.docCount, 0);
  assert.match(event.error, /Cannot embed with model "svc-mediumlm"/);
  const index = await server.ok<{ status: string; error: string }>({ action: "getIndex", indexName: "doomed" });
  assert.equal(index.status, "Failed");
  assert.equal(index.error, event.error);
  assert.ok(
    await verifySignature(await secretOf(server), receiver.deliveries[0]!.signature, receiver.deliveries[0]!.body),
  );
});

Deno.test("a receiver that answers 500 twice, then 200, gets the event on the third attempt", async () => {
  await using receiver = startReceiver((n) => n <= 2 ? 500 : 200);
  await using server = await startTestServer({ env: { WEBHOOK_ALLOWED_HOSTS: receiver.host } });
  const originalWarn = console.warn;
  const warnings: string[] = [];
  console.warn = (message: string) => warnings.push(message);
  const started = Date.now();
  try {
    const response = await server.call({
      action: "createIndex",
      indexName: "retried",
      docs: docs("r", 2),
      options: { wait: false, notify: { url: receiver.url } },
    });
    assert.equal(response.status, 202);
    await response.body?.cancel();
    await until(() => receiver.deliveries.length === 3);
  } finally {
    console.warn = originalWarn;
  }
  const seconds = (Date.now() - started) / 1000;
  assert.deepEqual(receiver.deliveries.map((delivery) => delivery.status), [500, 500, 200]);
  const bodies = new Set(receiver.deliveries.map((delivery) => delivery.body));
  assert.equal(bodies.size, 1, "every attempt carries the same event");
  const secret = await secretOf(server);
  for (const delivery of receiver.deliveries) {
    assert.ok(await verifySignature(secret, delivery.signature, delivery.body));
  }
  assert.equal(warnings.length, 2);
  assert.match(warnings[0]!, /failed \(HTTP 500\); attempt 2 in 1 s/);
  assert.match(warnings[1]!, /failed \(HTTP 500\); attempt 3 in 2 s/);
  assert.ok(seconds >= 3 && seconds < 10, `${seconds} s`);
  const metrics = await metricsText(server);
  assert.equal(metricIn(metrics, 'quire_webhook_deliveries_total{result="failed"}'), 2);
  assert.equal(metricIn(metrics, 'quire_webhook_deliveries_total{result="ok"}'), 1);
  console.log(`webhooks: delivered on the 3rd attempt after ${seconds.toFixed(1)} s`);
});

Deno.test("notify URLs are checked at request time: allowed host, https unless loopback, a queued write", async (t) => {
  await using server = await startTestServer({ env: { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1:9,hooks.example.com" } });
  await server.ok({ action: "createIndex", indexName: "faq", docs: docs("f", 1) });
  const cases: [string, Record<string, unknown>, RegExp][] = [
    [
      "a host not in the list",
      { action: "addDocs", docs: [], options: { wait: false, notify: { url: "https://evil.example.com/x" } } },
      /^Invalid "options\.notify\.url": host "evil\.example\.com" is not in WEBHOOK_ALLOWED_HOSTS$/,
    ],
    [
      "a listed host on another port",
      { action: "addDocs", docs: [], options: { wait: false, notify: { url: "http://127.0.0.1:8/x" } } },
      /host "127\.0\.0\.1:8" is not in WEBHOOK_ALLOWED_HOSTS/,
    ],
    [
      "http to a host that is not loopback",
      { action: "addDocs", docs: [], options: { wait: false, notify: { url: "http://hooks.example.com/x" } } },
      /use https: http is taken only for loopback hosts/,
    ],
    [
      "another scheme",
      { action: "addDocs", docs: [], options: { wait: false, notify: { url: "ftp://hooks.example.com/x" } } },
      /the scheme "ftp" is not taken: use https/,
    ],
    [
      "not a URL",
      { action: "addDocs", docs: [], options: { wait: false, notify: { url: "hooks.example.com/x" } } },
      /"hooks\.example\.com\/x" is not an absolute URL/,
    ],
    [
      "a user name in the URL",
      { action: "addDocs", docs: [], options: { wait: false, notify: { url: "https://me:pw@hooks.example.com/" } } },
      /must not hold a user name or password/,
    ],
    [
      "a write that is not queued",
      { action: "addDocs", docs: [], options: { notify: { url: "https://hooks.example.com/x" } } },
      /^Invalid "options\.notify": .* needs "options\.wait": false$/,
    ],
    [
      "a write with wait: true",
      { action: "addDocs", docs: [], options: { wait: true, notify: { url: "https://hooks.example.com/x" } } },
      /needs "options\.wait": false/,
    ],
    [
      "reembedIndex to a host not in the list",
      { action: "reembedIndex", options: { notify: { url: "https://evil.example.com/x" } } },
      /host "evil\.example\.com" is not in WEBHOOK_ALLOWED_HOSTS/,
    ],
    [
      "createIndex to a host not in the list",
      {
        action: "createIndex",
        indexName: "other",
        docs: [],
        options: { wait: false, notify: { url: "https://evil.example.com/x" } },
      },
      /host "evil\.example\.com" is not in WEBHOOK_ALLOWED_HOSTS/,
    ],
  ];
  for (const [name, body, message] of cases) {
    await t.step(name, async () => {
      const response = await server.call({ indexName: "faq", ...body });
      assert.equal(response.status, 400);
      assert.match((await response.json()).error, message);
    });
  }
  const index = await server.ok<{ version: string; status: string }>({ action: "getIndex", indexName: "faq" });
  assert.deepEqual([index.version, index.status], ["1", "Ready"], "nothing was queued");
  assert.equal((await server.call({ action: "getIndex", indexName: "other" })).status, 404);

  await t.step("no WEBHOOK_ALLOWED_HOSTS: every notify URL is refused, naming the setting", async () => {
    await using plain = await startTestServer();
    await plain.ok({ action: "createIndex", indexName: "faq", docs: [] });
    const response = await plain.call({
      action: "addDocs",
      indexName: "faq",
      docs: [],
      options: { wait: false, notify: { url: "http://127.0.0.1:9/x" } },
    });
    assert.equal(response.status, 400);
    assert.match((await response.json()).error, /webhooks are off on this server: WEBHOOK_ALLOWED_HOSTS lists no host/);
  });
});

Deno.test("a listed host:port allows that port only, a listed host without a port its scheme's default port only", async () => {
  await using receiver = startReceiver();
  const port = Number(new URL(receiver.url).port);
  await using server = await startTestServer({ env: { WEBHOOK_ALLOWED_HOSTS: `localhost:${port},localhost` } });
  // One index per accepted write: a second queued write to an index that is updating is a 409.
  for (const indexName of ["listed-port", "default-port"]) {
    await server.ok({ action: "createIndex", indexName, docs: [] });
  }
  const notify = (indexName: string, url: string) =>
    server.call({ action: "addDocs", indexName, docs: [], options: { wait: false, notify: { url } } });
  const otherPort = port === 65_535 ? port - 1 : port + 1;
  for (const url of [`http://localhost:${otherPort}/hooks/quire`, "http://localhost:5432/"]) {
    const refused = await notify("listed-port", url);
    assert.equal(refused.status, 400, url);
    assert.match(
      (await refused.json()).error,
      /^Invalid "options\.notify\.url": host "localhost:\d+" is not in WEBHOOK_ALLOWED_HOSTS$/,
    );
  }
  const listed = await notify("listed-port", `http://localhost:${port}/hooks/quire`);
  assert.equal(listed.status, 202, await listed.text());
  const defaultPort = await notify("default-port", "http://localhost/hooks/quire");
  assert.equal(defaultPort.status, 202, await defaultPort.text());
});

Deno.test("rotateWebhookSecret changes the key that signs events; only keys granted it by name manage the secret", async () => {
  await using receiver = startReceiver();
  await using server = await startTestServer({ env: { WEBHOOK_ALLOWED_HOSTS: receiver.host } });
  const client = new QuireClient({ baseUrl: new URL("/", server.url), projectId: "default", key: server.key });
  const { secret: before } = await client.getWebhookSecret();
  const { secret: rotated } = await client.rotateWebhookSecret({ idempotencyKey: "rotate-1" });
  assert.notEqual(rotated, before);
  assert.match(rotated, /^whsec_/);
  assert.equal(await secretOf(server), rotated);
  assert.deepEqual(await client.rotateWebhookSecret({ idempotencyKey: "rotate-1" }), { secret: rotated }, "replayed");
  assert.equal(await secretOf(server), rotated);
  const queued = await client.createIndex("signed", docs("s", 1), { wait: false, notify: { url: receiver.url } });
  assert.equal(queued.status, "Building");
  await until(() => receiver.deliveries.length === 1);
  const { body, signature } = receiver.deliveries[0]!;
  assert.ok(await verifySignature(rotated, signature, body));
  assert.ok(!await verifySignature(before, signature, body), "the old secret no longer verifies");

  const everything = await server.ok<{ key: string }>({ action: "createKey", actions: ["*"] });
  const named = await server.ok<{ key: string }>({ action: "createKey", actions: ["getWebhookSecret"] });
  for (const action of ["getWebhookSecret", "rotateWebhookSecret"]) {
    const refused = await server.call({ action }, { "x-project-key": everything.key });
    assert.equal(refused.status, 403, `"*" does not grant ${action}`);
    assert.match((await refused.json()).error, new RegExp(`may not use action "${action}"`));
  }
  const granted = await server.call({ action: "getWebhookSecret" }, { "x-project-key": named.key });
  assert.deepEqual(await granted.json(), { secret: rotated });
});

Deno.test("a webhook whose server is killed -9 between the job's end and the delivery arrives after the restart", async () => {
  let up = false;
  await using receiver = startReceiver(() => up ? 200 : 503);
  const env = { ...await serverEnvironment(), WEBHOOK_ALLOWED_HOSTS: receiver.host, LOG_REQUESTS: "false" };
  let server = await startServerProcess(env);
  const key = server.key;
  try {
    const response = await server.call({
      action: "createIndex",
      indexName: "crash",
      docs: docs("c", 20),
      options: { wait: false, notify: { url: receiver.url } },
    });
    assert.equal(response.status, 202);
    await response.body?.cancel();
    // The job has ended and its first attempt failed: the delivery waits in the outbox for its retry.
    await until(() => receiver.deliveries.length >= 1);
    // The kill lands in the wait before the retry (1 s), once the failed attempt is recorded: killed within an
    // attempt, the delivery would wait for the attempt's claim to lapse (15 s), which the shutdown test covers.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.notEqual(await server.stop("SIGKILL"), 0);
    const failed = receiver.deliveries.length;
    up = true;
    server = await startServerProcess(env, key);
    await until(() => receiver.deliveries.some((delivery) => delivery.status === 200));
    const event = JSON.parse(receiver.deliveries.at(-1)!.body);
    assert.equal(event.type, "job.completed");
    assert.equal(event.docCount, 20);
    const { secret } = await (await server.call({ action: "getWebhookSecret" })).json();
    assert.ok(await verifySignature(secret, receiver.deliveries.at(-1)!.signature, receiver.deliveries.at(-1)!.body));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(receiver.deliveries.filter((delivery) => delivery.status === 200).length, 1, "delivered once");
    console.log(`webhooks: ${failed} attempt(s) before the kill, delivered after the restart`);
  } finally {
    await server.stop();
  }
});

Deno.test("a shutdown cuts an attempt short and gives up its claim, so that the restarted server delivers at once", async () => {
  // The first attempt gets no answer while the test runs.
  const { promise: held, resolve: release } = Promise.withResolvers<void>();
  await using receiver = startReceiver(async (n) => {
    if (n === 1) await held;
    return 204;
  });
  let server = await startTestServer({ env: { WEBHOOK_ALLOWED_HOSTS: receiver.host } });
  try {
    const response = await server.call({
      action: "createIndex",
      indexName: "slow",
      docs: docs("s", 1),
      options: { wait: false, notify: { url: receiver.url } },
    });
    assert.equal(response.status, 202);
    await response.body?.cancel();
    await until(() => receiver.deliveries.length === 1);
    const stopping = Date.now();
    server = await server.restart();
    const restarted = Date.now();
    await until(() => receiver.deliveries.length === 2 && receiver.deliveries[1]!.status === 204, 5_000);
    const seconds = (Date.now() - restarted) / 1000;
    assert.ok(restarted - stopping < 5_000, `the shutdown took ${restarted - stopping} ms`);
    assert.ok(seconds < 2.5, `delivered ${seconds} s after the restart, not after the claim's 15 s`);
    assert.equal(receiver.deliveries[0]!.body, receiver.deliveries[1]!.body);
  } finally {
    release();
    await server.close();
  }
});

Deno.test("a delivery is given up after its retry window, and one to a host no longer allowed at once", async () => {
  await using receiver = startReceiver(() => 500);
  const kv = await Deno.openKv(":memory:");
  const metrics = new Metrics();
  const background = new BackgroundTasks();
  await createProject(kv, "p");
  const record = { projectId: "p", name: "faq", docCount: 1 } as IndexRecord;
  const now = Date.now();
  const delivery = (jobId: string, url: string): WebhookDelivery => ({
    projectId: "p",
    url,
    event: jobEndEvent({ jobId, record }, now),
    createdAt: now,
    attempts: 0,
    nextAttemptAt: now,
  });
  await kv.atomic().mutate(
    deliveryMutation(delivery("job-1", receiver.url), 2_000),
    deliveryMutation(delivery("job-2", "https://gone.example.com/x"), 2_000),
  ).commit();
  const deliverer = new WebhookDeliverer(kv, {
    metrics,
    background,
    allowedHosts: [receiver.host],
    retryWindowMs: 2_000,
  });
  const originalWarn = console.warn;
  const originalError = console.error;
  const errors: string[] = [];
  console.warn = () => {};
  console.error = (message: string) => errors.push(message);
  try {
    deliverer.start();
    const deadline = Date.now() + 10_000;
    while ((await Array.fromAsync(listDeliveries(kv))).length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    deliverer.stop();
    await background.idle();
    console.warn = originalWarn;
    console.error = originalError;
    kv.close();
  }
  assert.ok(receiver.deliveries.length >= 2, `${receiver.deliveries.length} attempts`);
  assert.ok(receiver.deliveries.every((received) => JSON.parse(received.body).jobId === "job-1"));
  assert.equal(metrics.webhooks().get("given_up"), 2);
  assert.equal(metrics.webhooks().get("failed"), receiver.deliveries.length);
  assert.ok(errors.some((message) => /job-2: host "gone\.example\.com" is not in WEBHOOK_ALLOWED_HOSTS/.test(message)));
  assert.ok(errors.some((message) => /job-1: HTTP 500, after \d+ attempts/.test(message)));
});
