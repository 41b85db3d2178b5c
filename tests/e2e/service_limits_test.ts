/** End-to-end: health probes, the body read timeout, the per-project concurrency limit and auth failure counting. */
import assert from "node:assert/strict";
import { Embedder } from "../../src/embedding/embedder.ts";
import { assertJsonError, startTestServer, testModels } from "../_helpers.ts";

Deno.test("/healthz and /readyz answer without a key and reveal nothing more than what is unavailable", async () => {
  {
    await using server = await startTestServer();
    const base = server.url.replace("/manage", "");
    const live = await fetch(`${base}/healthz`);
    // The process is named, so that a client behind PROCESSES > 1 or a load balancer can tell who answered.
    assert.deepEqual([live.status, await live.json()], [200, { status: "ok", process: 1, pid: Deno.pid }]);
    const ready = await fetch(`${base}/readyz`);
    assert.deepEqual([ready.status, await ready.json()], [200, { status: "ready" }]);
    await assertJsonError(await fetch(`${base}/healthz`, { method: "POST" }), 405);
  }
  const registry = { ...await testModels(), "svc-minilm": { source: "/nonexistent/model", version: "1" } };
  await using broken = await startTestServer({
    embedder: () => new Embedder(registry, { cacheDir: "/tmp/quire-none", allowRemote: false }),
  });
  const ready = await fetch(`${broken.url.replace("/manage", "")}/readyz`);
  assert.deepEqual([ready.status, await ready.json()], [503, { status: "unavailable", unavailable: ["model"] }]);
});

Deno.test("a body that arrives too slowly is 408", async () => {
  await using server = await startTestServer({ env: { BODY_TIMEOUT_MS: "200" } });
  const encoder = new TextEncoder();
  let timer: ReturnType<typeof setInterval> | undefined;
  let sent = 0;
  // A space every 50 ms for a second: the server stops waiting after 200 ms. (The client only reads the answer
  // once it has sent everything.)
  const slow = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode('{"action":'));
      timer = setInterval(() => {
        if (++sent === 20) {
          clearInterval(timer);
          controller.close();
        } else controller.enqueue(encoder.encode(" "));
      }, 50);
    },
    cancel() {
      clearInterval(timer);
    },
  });
  const started = performance.now();
  const response = await server.send(slow);
  await assertJsonError(response, 408, /took too long/);
  assert.ok(performance.now() - started < 900, "answered before the body ended");
});

Deno.test("a project over its in-flight limit gets 429 with Retry-After, and is served again below it", async () => {
  let unblock!: () => void;
  const blocked = new Promise<void>((resolve) => unblock = resolve);
  class SlowEmbedder extends Embedder {
    override async embed(modelId: string, texts: string[]): Promise<Float32Array[]> {
      if (texts.some((text) => text.startsWith("slow"))) await blocked;
      return await super.embed(modelId, texts);
    }
  }
  const models = await testModels();
  await using server = await startTestServer({
    env: { PROJECT_MAX_CONCURRENCY: "1" },
    embedder: () => new SlowEmbedder(models, { cacheDir: "/tmp/quire-none", allowRemote: false }),
  });
  try {
    await server.ok({ action: "createIndex", indexName: "i", docs: [] });
    const holding = server.call({ action: "addDocs", indexName: "i", docs: [{ id: "a", text: "slow text" }] });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const refused = await server.call({ action: "getIndex", indexName: "i" });
    const body = await assertJsonError(refused, 429, /in flight/);
    assert.equal(body.action, "getIndex");
    assert.equal(refused.headers.get("retry-after"), "1");
    unblock();
    assert.equal((await holding).status, 200);
    await server.ok({ action: "getIndex", indexName: "i" });
  } finally {
    unblock();
  }
});

Deno.test("authentication failures are counted and logged without the key", async () => {
  await using server = await startTestServer();
  const logged: string[] = [];
  const originalWarn = console.warn;
  console.warn = (...args: unknown[]) => logged.push(args.join(" "));
  try {
    const authenticationFailures = () => server.service.context.metrics.authFailures();
    const before = authenticationFailures();
    await assertJsonError(await server.call({ action: "listIndexes" }, { "x-project-key": "qk_secret-guess" }), 403);
    await assertJsonError(await server.call({ action: "listIndexes", projectId: "ghost" }), 404);
    assert.equal(authenticationFailures(), before + 2);
    assert.equal(logged.length, 2);
    assert.ok(logged.every((line) => !line.includes("qk_secret-guess") && !line.includes(server.key)));
  } finally {
    console.warn = originalWarn;
  }
});

Deno.test("under a flood of requests past the per-project limit, health checks keep answering", async () => {
  await using server = await startTestServer({ env: { PROJECT_MAX_CONCURRENCY: "8" } });
  const base = server.url.replace("/manage", "");
  const docs = Array.from({ length: 200 }, (_, i) => ({ id: `d${i}`, text: `river storm forest ${i}` }));
  await server.ok({ action: "createIndex", indexName: "busy", docs });
  // Five times the in-flight limit, over and over, while the health checks are timed.
  let flooding = true;
  const statuses = new Map<number, number>();
  const flood = Promise.all(Array.from({ length: 40 }, async (_, i) => {
    while (flooding) {
      const response = await server.call({ action: "search", indexName: "busy", query: `storm ${i}` });
      await response.body?.cancel();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    }
  }));
  const latencies: number[] = [];
  for (let i = 0; i < 20; i++) {
    const started = performance.now();
    const health = await fetch(`${base}/healthz`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  flooding = false;
  await flood;
  assert.ok((statuses.get(429) ?? 0) > 0, `the flood met the limit: ${JSON.stringify([...statuses])}`);
  assert.deepEqual([...statuses.keys()].filter((status) => status !== 200 && status !== 429), []);
  assert.ok(Math.max(...latencies) < 1_000, `health checks answered within a second: ${latencies.map(Math.round)}`);
  const sent = [...statuses.values()].reduce((sum, count) => sum + count, 0);
  console.log(
    `limits and overload: ${sent} requests at 5× the limit (${statuses.get(429)} got 429), ` +
      `health checks within ${Math.round(Math.max(...latencies))} ms, 0 violations`,
  );
});
