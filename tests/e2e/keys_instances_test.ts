/**
 * Scoped keys, rate limits and idempotent writes across two real server processes over one KV file (issue 42): a key
 * deleted or expired on one is refused on both, one rate holds across both, and a replay survives a SIGKILL.
 */
import assert from "node:assert/strict";
import { metricIn, metricsText, serverEnvironment, startServerProcess } from "../_server_process.ts";
import {
  caller,
  DOCS,
  expect200,
  expectError,
  type KeyView,
  type Reply,
  retrying,
  SETTLE_MS,
  sleep,
} from "../_keys_client.ts";

Deno.test(
  "two processes over one KV file: deleted and expired keys, rate limits, and idempotent replays across a SIGKILL",
  async (t) => {
    const env = { ...await serverEnvironment(), METADATA_CACHE_MS: "250", LOG_REQUESTS: "false" };
    await using a = await startServerProcess(env);
    await using b = await startServerProcess(env, a.key);
    const onA = caller(a.url, a.key);
    const onB = caller(b.url, a.key);
    const create = { action: "createIndex", indexName: "shared", docs: DOCS, options: { wait: true } };
    expect200(await retrying(() => onA(create)), "createIndex shared");
    const getIndex = { action: "getIndex", indexName: "shared" };

    await t.step("a key deleted on one instance is refused on the other within METADATA_CACHE_MS", async () => {
      const made = expect200(await onA<KeyView>({ action: "createKey", indexes: ["shared"] }), "createKey");
      expect200(await caller(b.url, made.key!)(getIndex), "the new key on B");
      expect200(await caller(a.url, made.key!)(getIndex), "the new key on A");
      assert.equal(expect200(await onA({ action: "deleteKey", keyId: made.keyId }), "deleteKey on A"), true);
      await sleep(SETTLE_MS);
      expectError(await caller(b.url, made.key!)(getIndex), 403, "the deleted key on B");
      expectError(await caller(a.url, made.key!)(getIndex), 403, "the deleted key on A");
    });

    await t.step("a key is refused on every instance once its expiresAt has passed", async () => {
      const expiresAt = Date.now() + 2000;
      const made = expect200(
        await onB<KeyView>({ action: "createKey", expiresAt: new Date(expiresAt).toISOString() }),
        "createKey expiring",
      );
      expect200(await caller(a.url, made.key!)(getIndex), "the expiring key on A before expiresAt");
      expect200(await caller(b.url, made.key!)(getIndex), "the expiring key on B before expiresAt");
      await sleep(Math.max(0, expiresAt - Date.now()) + SETTLE_MS);
      expectError(await caller(a.url, made.key!)(getIndex), 403, "the expired key on A");
      expectError(await caller(b.url, made.key!)(getIndex), 403, "the expired key on B");
    });

    await t.step(
      "requestsPerMinute holds across both instances within 20%, with 429, Retry-After and metrics",
      async () => {
        const N = 20;
        const limited = expect200(await onA<KeyView>({ action: "createKey", requestsPerMinute: N }), "createKey");
        const free = expect200(await onA<KeyView>({ action: "createKey" }), "createKey unlimited");
        const servers = [a, b];
        const counted = () =>
          Promise.all(
            servers.map(async (server) =>
              metricIn(await metricsText(server), `quire_rate_limited_total{key="${limited.keyId}"}`) || 0
            ),
          );
        const before = await counted();
        // Fixed windows per UTC minute: start with at least 20 s of this minute left.
        const left = 60_000 - Date.now() % 60_000;
        if (left < 20_000) await sleep(left + 100);
        const minute = Math.floor(Date.now() / 60_000);
        const passed = [0, 0];
        const refused = [0, 0];
        const busy = { count: 0 };
        for (let i = 0; i < 2.5 * N; i++) {
          const which = i % 2;
          const server = servers[which]!;
          const reply = await retrying(() => caller(server.url, limited.key!)(getIndex), busy);
          if (reply.status === 200) passed[which]!++;
          else {
            expectError(reply, 429, `request ${i} with the limited key`);
            const retryAfter = reply.headers.get("retry-after") ?? "";
            assert.match(retryAfter, /^\d+$/, `429 has Retry-After in whole seconds: "${retryAfter}"`);
            assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 60, `Retry-After ${retryAfter}`);
            refused[which]!++;
          }
          const other = await retrying(() => caller(server.url, free.key!)(getIndex), busy);
          expect200(other, `request ${i} with another key of the project`);
        }
        assert.equal(Math.floor(Date.now() / 60_000), minute, "the test's requests stayed in one minute window");
        const total = passed[0]! + passed[1]!;
        console.log(`rate limit ${N}/min: ${total} passed, ${refused} refused on A,B, ${busy.count} 503s retried`);
        assert.ok(total >= N && total <= 1.2 * N, `${total} of ${2.5 * N} passed (A ${passed[0]}, B ${passed[1]})`);
        const after = await counted();
        assert.deepEqual(
          after.map((count, i) => count - before[i]!),
          refused,
          `quire_rate_limited_total{key="${limited.keyId}"} on A and B counts their 429s`,
        );
      },
    );

    await t.step("an idempotent write replays on the other instance, and after a SIGKILL and a restart", async () => {
      const createIdem = { action: "createIndex", indexName: "idem", docs: DOCS, options: { wait: true } };
      const created = await retrying(() => onA(createIdem, { "idempotency-key": "create-1" }));
      assert.equal(expect200(created, "createIndex on A"), true);
      const add = {
        action: "addDocs",
        indexName: "idem",
        docs: [{ id: "k1", text: "kept" }, { id: "k2", text: "gone" }],
      };
      const added = await retrying(() => onA(add, { "idempotency-key": "add-1" }));
      assert.deepEqual(expect200(added, "addDocs on A"), { added: 2, updated: 0 });
      const check = (again: Reply, first: Reply, what: string) => {
        assert.equal(again.status, first.status, `${what}: ${again.text}`);
        assert.equal(again.headers.get("idempotent-replayed"), "true", what);
        assert.deepEqual(again.body, first.body, what);
      };
      check(await retrying(() => onB(createIdem, { "idempotency-key": "create-1" })), created, "createIndex on B");
      check(await retrying(() => onB(add, { "idempotency-key": "add-1" })), added, "addDocs on B");

      const add2 = { action: "addDocs", indexName: "idem", docs: [{ id: "k3", text: "answered then killed" }] };
      const added2 = await retrying(() => onA(add2, { "idempotency-key": "add-2" }));
      assert.deepEqual(expect200(added2, "addDocs on A"), { added: 1, updated: 0 });
      await a.stop("SIGKILL");
      // Had a replay run again, it would bring k2 and k3 back.
      const removed = await retrying(() => onB({ action: "deleteDocs", indexName: "idem", docIds: ["k2", "k3"] }));
      assert.deepEqual(expect200(removed, "deleteDocs on B"), { deleted: 2 });

      await using restarted = await startServerProcess(env, a.key);
      const onRestarted = caller(restarted.url, a.key);
      check(await retrying(() => onRestarted(add2, { "idempotency-key": "add-2" })), added2, "addDocs after SIGKILL");
      check(await retrying(() => onRestarted(add, { "idempotency-key": "add-1" })), added, "addDocs after restart");
      check(await retrying(() => onB(add2, { "idempotency-key": "add-2" })), added2, "addDocs on B after SIGKILL");
      const docs = expect200(await onRestarted<{ id: string }[]>({ action: "getDocs", indexName: "idem" }), "getDocs");
      assert.deepEqual(docs.map((doc) => doc.id).sort(), ["k1", "p1", "p2"], "no replay wrote anything");
      await sleep(SETTLE_MS);
      const view = expect200(await onRestarted<{ docCount: number }>({ action: "getIndex", indexName: "idem" }), "");
      assert.equal(view.docCount, 3);
      const other = { ...add2, docs: [{ id: "k3", text: "another body" }] };
      expectError(await onRestarted(other, { "idempotency-key": "add-2" }), 422, "another body after the restart");
    });
  },
);
