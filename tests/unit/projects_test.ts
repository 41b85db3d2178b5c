/** Unit: project keys, the project store and the `project` CLI commands, over an in-memory KV. */
import assert from "node:assert/strict";
import { generateProjectKey, hashProjectKey, verifyProjectKey } from "../../src/projects/project_keys.ts";
import { createProject } from "../../src/projects/project_store.ts";
import { getProject, listProjects } from "../../src/storage/project_records.ts";
import { runProjectCommand } from "../../src/cli/project_command.ts";
import { RecordCache } from "../../src/storage/record_cache.ts";
import { Authenticator } from "../../src/keys/authenticate.ts";
import { Metrics } from "../../src/observability/metrics.ts";
import { ApiError } from "../../src/api/api_error.ts";
import { aliasKey, deletedIndexKey, indexKey, projectKey, trashKey } from "../../src/storage/kv_keys.ts";

/** Authenticates once through a fresh authenticator over `records`. */
async function authenticate(records: RecordCache, projectId: string, key: string | null): Promise<void> {
  await new Authenticator(records, new Metrics()).authenticate(projectId, { key, authorization: null });
}

Deno.test("project keys are random, long, and verified only against their own hash", () => {
  const keys = new Set(Array.from({ length: 100 }, generateProjectKey));
  assert.equal(keys.size, 100);
  const key = [...keys][0]!;
  assert.match(key, /^qk_[A-Za-z0-9_-]{43}$/, "256 bits, base64url");
  const hash = hashProjectKey(key);
  assert.match(hash, /^[0-9a-f]{64}$/);
  assert.ok(verifyProjectKey(key, hash));
  assert.ok(!verifyProjectKey(`${key}x`, hash));
  assert.ok(!verifyProjectKey(key, "short"));
});

Deno.test("a project stores only the hash of its key", async () => {
  using kv = await Deno.openKv(":memory:");
  const key = (await createProject(kv, "acme"))!;
  const stored = await kv.get(projectKey("acme"));
  assert.ok(!JSON.stringify(stored.value).includes(key));
  assert.equal((await getProject(kv, "acme"))?.keyHash, hashProjectKey(key));
  assert.equal(await createProject(kv, "acme"), null, "an id is created once");
  await assert.rejects(() => createProject(kv, "bad id!"), RangeError);
});

Deno.test("authenticate: 404 for an unknown project, 403 for a missing, wrong or foreign key", async () => {
  using kv = await Deno.openKv(":memory:");
  const key = (await createProject(kv, "a"))!;
  const otherKey = (await createProject(kv, "b"))!;
  const records = new RecordCache(kv, 0);
  await authenticate(records, "a", key);
  const status = (promise: Promise<void>) =>
    promise.then(() => 200, (error) => error instanceof ApiError ? error.status : 0);
  assert.equal(await status(authenticate(records, "zzz", key)), 404);
  assert.equal(await status(authenticate(records, "a", null)), 403);
  assert.equal(await status(authenticate(records, "a", "qk_nope")), 403);
  assert.equal(await status(authenticate(records, "a", otherKey)), 403);
});

Deno.test("the record cache reuses a read for its time to live, and forgets a key at once when told", async () => {
  using kv = await Deno.openKv(":memory:");
  const records = new RecordCache(kv, 60_000);
  await kv.set(["k"], 1);
  assert.equal(await records.get(["k"]), 1);
  await kv.set(["k"], 2);
  assert.equal(await records.get(["k"]), 1, "within the time to live, the cached value");
  records.invalidate(["k"]);
  assert.equal(await records.get(["k"]), 2);
  const overlapping = records.get(["k"]);
  await kv.set(["k"], 3);
  records.invalidate(["k"]);
  await overlapping;
  assert.equal(await records.get(["k"]), 3, "a read that overlapped an invalidation is not kept");
  const short = new RecordCache(kv, 1);
  assert.equal(await short.get(["k"]), 3);
  await kv.set(["k"], 4);
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(await short.get(["k"]), 4, "after the time to live, the store");
});

Deno.test("cli: create prints one JSON line; list never shows keys; rotate-key invalidates the old key", async () => {
  using kv = await Deno.openKv(":memory:");
  const created = await runProjectCommand(kv, ["create", "shop"]);
  assert.equal(created.code, 0);
  assert.equal(created.stdout.length, 1);
  const { projectId, key } = JSON.parse(created.stdout[0]!);
  assert.equal(projectId, "shop");
  assert.equal((await runProjectCommand(kv, ["create", "shop"])).code, 1);

  const listed = await runProjectCommand(kv, ["list"]);
  assert.equal(listed.stdout.length, 1);
  assert.ok(!listed.stdout[0]!.includes(key));
  assert.equal(JSON.parse(listed.stdout[0]!).projectId, "shop");

  const rotated = await runProjectCommand(kv, ["rotate-key", "shop"]);
  const newKey = JSON.parse(rotated.stdout[0]!).key;
  assert.notEqual(newKey, key);
  const records = new RecordCache(kv, 0);
  await assert.rejects(() => authenticate(records, "shop", key), ApiError);
  await authenticate(records, "shop", newKey);
  assert.equal((await runProjectCommand(kv, ["rotate-key", "nobody"])).code, 1);
  assert.equal((await runProjectCommand(kv, ["frobnicate"])).code, 1);
  assert.equal((await runProjectCommand(kv, ["create"])).code, 1);
});

Deno.test("cli: delete removes the project and marks its indexes as garbage", async () => {
  using kv = await Deno.openKv(":memory:");
  await runProjectCommand(kv, ["create", "gone"]);
  await kv.set(indexKey("gone", "i"), { id: "index-1" });
  await kv.set(deletedIndexKey("gone", "index-2"), { record: { id: "index-2" }, deletedAt: "", expiresAt: "" });
  await kv.set(aliasKey("gone", "a"), { alias: "a", indexName: "i", updatedAt: "" });
  assert.equal((await runProjectCommand(kv, ["delete", "gone"])).code, 0);
  assert.equal(await getProject(kv, "gone"), null);
  assert.equal((await kv.get(indexKey("gone", "i"))).value, null);
  assert.notEqual((await kv.get(trashKey("index-1"))).value, null);
  assert.notEqual((await kv.get(trashKey("index-2"))).value, null, "a deleted index kept for undo goes too");
  assert.equal((await kv.get(deletedIndexKey("gone", "index-2"))).value, null);
  assert.equal((await kv.get(aliasKey("gone", "a"))).value, null);
  assert.deepEqual(await listProjects(kv), []);
  assert.equal((await runProjectCommand(kv, ["delete", "gone"])).code, 1);
});

Deno.test("project key create, list and delete: a scoped key that authenticates until it is deleted", async () => {
  using kv = await Deno.openKv(":memory:");
  await createProject(kv, "acme");
  const records = new RecordCache(kv, 0);
  const created = await runProjectCommand(kv, [
    "key",
    "create",
    "acme",
    "--actions",
    "search,getDocs",
    "--indexes",
    "faq-*",
    "--requests-per-minute",
    "60",
  ]);
  assert.equal(created.code, 0, created.stderr.join("\n"));
  const key = JSON.parse(created.stdout[0]!);
  assert.deepEqual([key.actions, key.indexes, key.requestsPerMinute], [["search", "getDocs"], ["faq-*"], 60]);
  assert.match(key.key, /^qk_/);
  const access = await new Authenticator(records, new Metrics()).authenticate("acme", {
    key: key.key,
    authorization: null,
  });
  assert.equal(access.keyId, key.keyId);

  const listed = await runProjectCommand(kv, ["key", "list", "acme"]);
  assert.equal(listed.stdout.length, 1);
  assert.ok(!listed.stdout[0]!.includes(key.key), "no secret listed");
  assert.equal(JSON.parse(listed.stdout[0]!).lastUsedAt, null);

  assert.equal((await runProjectCommand(kv, ["key", "create", "acme", "--actions", "drop"])).code, 1);
  assert.equal((await runProjectCommand(kv, ["key", "create", "nope"])).code, 1);
  assert.equal((await runProjectCommand(kv, ["key", "delete", "acme", key.keyId])).code, 0);
  assert.equal((await runProjectCommand(kv, ["key", "delete", "acme", key.keyId])).code, 1);
  await assert.rejects(
    () => authenticate(records, "acme", key.key),
    (error) => error instanceof ApiError && error.status === 403,
  );
});
