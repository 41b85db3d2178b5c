/**
 * The rules of webhooks as pure functions: `WEBHOOK_ALLOWED_HOSTS` parsing, which `options.notify` URLs may be sent
 * to, the signature against an independent HMAC, the event of a job's end, and the secret's form.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { parseConfig } from "../../src/config.ts";
import { hostAllowed, isLoopbackHostname, normalizeHost } from "../../src/util/host_names.ts";
import { checkedNotify, notifyUrlProblem } from "../../src/webhooks/notify_target.ts";
import { signatureHeader } from "../../src/webhooks/webhook_signature.ts";
import { jobEndEvent } from "../../src/webhooks/job_end_delivery.ts";
import { newWebhookSecret } from "../../src/webhooks/project_webhook_secret.ts";
import { ApiError } from "../../src/api/api_error.ts";
import type { IndexRecord } from "../../src/storage/index_records.ts";

Deno.test("hosts are normalized as URLs write them, and anything but a host or host:port is refused", () => {
  const cases: [string, string | null][] = [
    ["Hooks.Example.COM", "hooks.example.com"],
    [" hooks.example.com:443 ", "hooks.example.com:443"],
    ["127.0.0.1:8080", "127.0.0.1:8080"],
    ["127.1", "127.0.0.1"],
    ["::1", "[::1]"],
    ["[::1]:9000", "[::1]:9000"],
    ["bücher.example", "xn--bcher-kva.example"],
    ["", null],
    ["hooks.example.com/path", null],
    ["user@hooks.example.com", null],
    ["https://hooks.example.com", null],
    ["hooks.example.com:", null],
    ["hooks.example.com:0", null],
    ["hooks.example.com:65536", null],
    ["[::1", null],
  ];
  for (const [text, expected] of cases) assert.equal(normalizeHost(text), expected, JSON.stringify(text));
});

Deno.test("WEBHOOK_ALLOWED_HOSTS is absent by default, a list of normalized hosts when set, and refused when bad", () => {
  assert.equal(parseConfig({}).WEBHOOK_ALLOWED_HOSTS, undefined);
  assert.deepEqual(
    parseConfig({ WEBHOOK_ALLOWED_HOSTS: "Hooks.Example.com, 127.0.0.1:9000,,::1" }).WEBHOOK_ALLOWED_HOSTS,
    [
      "hooks.example.com",
      "127.0.0.1:9000",
      "[::1]",
    ],
  );
  assert.throws(
    () => parseConfig({ WEBHOOK_ALLOWED_HOSTS: "hooks.example.com,https://x.example" }),
    /^Error: Invalid WEBHOOK_ALLOWED_HOSTS "hooks\.example\.com,https:\/\/x\.example": "https:\/\/x\.example" is not a host/,
  );
});

Deno.test("a listed host:port allows that port, a listed host without one its scheme's default port only", () => {
  const allowed = ["hooks.example.com", "api.example.com:8443", "127.0.0.1:9000", "[::1]", "localhost"];
  assert.ok(hostAllowed(new URL("https://hooks.example.com/x"), allowed));
  assert.ok(hostAllowed(new URL("https://hooks.example.com:443/x"), allowed), "443 is https's default");
  assert.ok(!hostAllowed(new URL("https://hooks.example.com:9999/x"), allowed));
  assert.ok(!hostAllowed(new URL("https://hooks.example.com:80/x"), allowed), "80 is http's default, not https's");
  assert.ok(hostAllowed(new URL("https://api.example.com:8443/x"), allowed));
  assert.ok(!hostAllowed(new URL("https://api.example.com/x"), allowed));
  assert.ok(hostAllowed(new URL("https://api.example.com:443/x"), ["api.example.com:443"]), "443 is https's default");
  assert.ok(hostAllowed(new URL("https://api.example.com/x"), ["api.example.com:443"]));
  assert.ok(hostAllowed(new URL("http://api.example.com/x"), ["api.example.com:80"]), "80 is http's default");
  assert.ok(hostAllowed(new URL("http://127.0.0.1:9000/x"), allowed));
  assert.ok(!hostAllowed(new URL("http://127.0.0.1:9001/x"), allowed));
  assert.ok(!hostAllowed(new URL("http://127.0.0.1/x"), allowed));
  assert.ok(hostAllowed(new URL("http://[::1]/x"), allowed));
  assert.ok(!hostAllowed(new URL("http://[::1]:5/x"), allowed));
  assert.ok(hostAllowed(new URL("http://localhost/x"), allowed));
  assert.ok(hostAllowed(new URL("http://localhost:80/x"), allowed));
  assert.ok(!hostAllowed(new URL("http://localhost:5432/x"), allowed), "a local database is not a webhook receiver");
  assert.ok(!hostAllowed(new URL("https://evil.hooks.example.com/x"), allowed), "no subdomains");
  for (const hostname of ["localhost", "127.0.0.1", "127.9.8.7", "[::1]"]) assert.ok(isLoopbackHostname(hostname));
  for (const hostname of ["localhost.example", "128.0.0.1", "[::2]", "0.0.0.0"]) {
    assert.ok(!isLoopbackHostname(hostname));
  }
});

Deno.test("notify URLs: https to an allowed host, http only to an allowed loopback host, nothing when none is allowed", () => {
  const allowed = ["hooks.example.com", "127.0.0.1:9000", "localhost", "[::1]"];
  for (
    const url of ["https://hooks.example.com/q?x=1", "http://127.0.0.1:9000/", "http://localhost/", "http://[::1]/"]
  ) {
    assert.equal(notifyUrlProblem(url, allowed), null, url);
  }
  const refused: [string, RegExp][] = [
    ["http://hooks.example.com/", /use https: http is taken only for loopback hosts/],
    ["https://other.example.com/", /host "other\.example\.com" is not in WEBHOOK_ALLOWED_HOSTS/],
    ["http://127.0.0.1:9001/", /host "127\.0\.0\.1:9001" is not in/],
    ["http://localhost:1/", /host "localhost:1" is not in WEBHOOK_ALLOWED_HOSTS/],
    ["ws://hooks.example.com/", /the scheme "ws" is not taken/],
    ["https://a:b@hooks.example.com/", /user name or password/],
    ["/relative", /is not an absolute URL/],
  ];
  for (const [url, message] of refused) assert.match(notifyUrlProblem(url, allowed) ?? "", message, url);
  assert.match(notifyUrlProblem("https://hooks.example.com/", []) ?? "", /WEBHOOK_ALLOWED_HOSTS lists no host/);
});

Deno.test("checkedNotify needs a queued write, and gives the URL as a URL writes it", () => {
  const allowed = ["hooks.example.com"];
  assert.equal(checkedNotify(undefined, allowed), undefined);
  assert.equal(checkedNotify({ wait: false }, allowed), undefined);
  assert.deepEqual(checkedNotify({ wait: false, notify: { url: "https://HOOKS.example.com" } }, allowed), {
    url: "https://hooks.example.com/",
  });
  for (const wait of [undefined, true]) {
    assert.throws(
      () => checkedNotify({ wait, notify: { url: "https://hooks.example.com/" } }, allowed),
      (error) => error instanceof ApiError && error.status === 400 && /"options\.wait": false/.test(error.message),
    );
  }
});

Deno.test('the signature is the HMAC-SHA256 of "<t>.<body>" keyed by the whole secret, in hex', async () => {
  const secret = "whsec_test";
  const body = '{"type":"job.completed"}';
  const expected = createHmac("sha256", secret).update(`1700000000.${body}`).digest("hex");
  assert.equal(await signatureHeader(secret, body, 1_700_000_000), `t=1700000000,v1=${expected}`);
  assert.match(newWebhookSecret(), /^whsec_[A-Za-z0-9_-]{43}$/);
  assert.notEqual(newWebhookSecret(), newWebhookSecret());
});

Deno.test("a job's end becomes job.completed or job.failed, with the index's count and no document text", () => {
  const record = { projectId: "p", name: "faq", docCount: 12 } as IndexRecord;
  const at = Date.UTC(2026, 10, 21, 10, 0, 0);
  assert.deepEqual(jobEndEvent({ jobId: "j1", record }, at), {
    type: "job.completed",
    projectId: "p",
    indexName: "faq",
    jobId: "j1",
    status: "Ready",
    docCount: 12,
    at: "2026-11-21T10:00:00.000Z",
  });
  assert.deepEqual(jobEndEvent({ jobId: "j2", record, error: "Cannot embed" }, at), {
    type: "job.failed",
    projectId: "p",
    indexName: "faq",
    jobId: "j2",
    status: "Failed",
    docCount: 12,
    error: "Cannot embed",
    at: "2026-11-21T10:00:00.000Z",
  });
});
