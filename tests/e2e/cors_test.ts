/** Browsers of other origins: preflights, the CORS headers on answers, and `CORS_ORIGINS`, on a real server. */
import assert from "node:assert/strict";
import { startTestServer } from "../_helpers.ts";

function preflight(url: string, origin: string): Promise<Response> {
  return fetch(url, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type, x-project-key, x-service-version",
    },
  });
}

Deno.test("by default any origin may call: preflights get 204, answers name the origin and expose the paging header", async () => {
  await using server = await startTestServer();
  const answer = await preflight(server.url, "https://app.example");
  await answer.body?.cancel();
  assert.equal(answer.status, 204);
  assert.equal(answer.headers.get("access-control-allow-origin"), "*");
  assert.match(answer.headers.get("access-control-allow-methods")!, /POST/);
  for (const header of ["content-type", "x-project-key", "x-service-version"]) {
    assert.match(answer.headers.get("access-control-allow-headers")!, new RegExp(header));
  }
  const listed = await server.call({ action: "listIndexes" }, { origin: "https://app.example" });
  await listed.body?.cancel();
  assert.equal(listed.status, 200);
  assert.equal(listed.headers.get("access-control-allow-origin"), "*");
  assert.match(listed.headers.get("access-control-expose-headers")!, /x-next-cursor/);
  const refused = await server.call({ action: "listIndexes" }, {
    origin: "https://app.example",
    "x-project-key": "",
  });
  await refused.body?.cancel();
  assert.equal(refused.status, 403);
  assert.equal(refused.headers.get("access-control-allow-origin"), "*", "errors are readable too");

  const plain = await server.call({ action: "listIndexes" });
  await plain.body?.cancel();
  assert.equal(plain.headers.get("access-control-allow-origin"), null, "no Origin, no CORS headers");
  const metrics = await fetch(server.url.replace("/manage", "/metrics"), {
    headers: { origin: "https://app.example" },
  });
  await metrics.body?.cancel();
  assert.equal(metrics.status, 200);
  assert.equal(metrics.headers.get("access-control-allow-origin"), null, "/metrics is never shared with pages");
});

Deno.test("CORS_ORIGINS narrows the origins to a list, or turns CORS off", async () => {
  {
    await using listed = await startTestServer({ env: { CORS_ORIGINS: "https://a.example, https://b.example" } });
    const allowed = await preflight(listed.url, "https://b.example");
    await allowed.body?.cancel();
    assert.equal(allowed.status, 204);
    assert.equal(allowed.headers.get("access-control-allow-origin"), "https://b.example");
    assert.match(allowed.headers.get("vary")!, /origin/i);
    const other = await preflight(listed.url, "https://evil.example");
    await other.body?.cancel();
    assert.equal(other.status, 405, "a preflight of another origin is an OPTIONS like any other");
    assert.equal(other.headers.get("access-control-allow-origin"), null);
  }
  await using off = await startTestServer({ env: { CORS_ORIGINS: "none" } });
  const answer = await preflight(off.url, "https://a.example");
  await answer.body?.cancel();
  assert.equal(answer.status, 405);
  assert.equal(answer.headers.get("access-control-allow-origin"), null);
});
