/** `PROCESSES=2`: two full instances on one port over one store, started, spread over and stopped as one. */
import assert from "node:assert/strict";
import { serverEnvironment, startServerProcess } from "../_server_process.ts";

Deno.test("PROCESSES=2 serves one port from two processes that share the store, and stops cleanly", async () => {
  const env = { ...await serverEnvironment(), PROCESSES: "2", LOG_REQUESTS: "false" };
  const group = await startServerProcess(env);
  try {
    const health = group.url.replace("/manage", "/healthz");
    const pids = new Set<number>();
    const processes = new Set<number>();
    for (let attempt = 0; attempt < 200 && pids.size < 2; attempt++) {
      // A new connection each time, so that the kernel may hand it to either process.
      using client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
      try {
        const body = await (await fetch(health, { client })).json();
        pids.add(body.pid);
        processes.add(body.process);
        // The kernel may hand many connections in a row to one process, or the other may still be starting.
        if (pids.size < 2) await new Promise((resolve) => setTimeout(resolve, 20));
      } catch {
        // The second process may still be starting.
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    assert.equal(pids.size, 2, "two processes answered");
    assert.ok(!pids.has(group.pid), "the supervisor itself serves nothing");
    assert.deepEqual([...processes].sort(), [1, 2]);
    const docs = [{ id: "a", text: "a lantern on the copper meadow" }];
    assert.equal((await group.call({ action: "createIndex", indexName: "shared", docs })).status, 200);
    for (let i = 0; i < 6; i++) {
      using client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
      const response = await fetch(group.url, {
        method: "POST",
        client,
        headers: { "content-type": "application/json", "x-service-version": "v1", "x-project-key": group.key },
        body: JSON.stringify({ projectId: "default", action: "search", indexName: "shared", query: "lantern" }),
      });
      const result = await response.json();
      assert.equal(result.total, 1, "every process finds what one of them wrote");
    }
  } finally {
    assert.equal(await group.stop("SIGTERM"), 0);
  }
});
