/**
 * Unit: the backup's value encoding is lossless, an index copied while writes land (small ones, and a large one
 * staged as a pending batch) restores as the index at the copy's revision, into a real KV file, and a manifest that
 * gives no checksum of a file is refused.
 */
import assert from "node:assert/strict";
import { fromKvJson, type Json, toKvJson } from "../../src/backup/kv_json.ts";
import { writeBackup } from "../../src/backup/write_backup.ts";
import { restoreBackup } from "../../src/backup/restore_backup.ts";
import { UNFINISHED_JOB_ERROR } from "../../src/backup/index_copy.ts";
import { listBackups } from "../../src/backup/backup_directory.ts";
import { MANIFEST_FILE, readManifest } from "../../src/backup/backup_manifest.ts";
import { ApiError } from "../../src/api/api_error.ts";
import {
  commitIndexChanges,
  createIndexRecord,
  type IndexRecord,
  readIndexRecord,
} from "../../src/storage/index_records.ts";
import { listDocs, readDocHeads } from "../../src/storage/doc_records.ts";
import type { DocChange, StoredDoc } from "../../src/storage/doc_change_codec.ts";
import { insertProject } from "../../src/storage/project_records.ts";
import { mulberry32 } from "../../src/util/seeded_random.ts";
import { temporaryDir } from "../_helpers.ts";

Deno.test("stored keys and values survive the backup's JSON as they were", () => {
  const tagged = { $: "a key of the object's own", v: 1 };
  const values: unknown[] = [
    null,
    true,
    "text with \ud800 a lone surrogate",
    0,
    -0,
    1.5,
    NaN,
    Infinity,
    -Infinity,
    12345678901234567890n,
    undefined,
    new Uint8Array([0, 1, 255]),
    new Float32Array([0.5, -1, 3.25]),
    new Date(1_700_000_000_123),
    new Map<unknown, unknown>([["a", 1], [2n, new Uint8Array([7])]]),
    new Set(["x", 1]),
    new Deno.KvU64(42n),
    [1, undefined, { nested: [new Uint8Array(3)] }],
    tagged,
    JSON.parse('{"__proto__": {"polluted": true}, "plain": 1}'),
  ];
  for (const value of values) {
    const json = JSON.parse(JSON.stringify(toKvJson(value))) as Json;
    assert.deepEqual(fromKvJson(json), value, String(value));
  }
  const proto = fromKvJson(JSON.parse(JSON.stringify(toKvJson(values.at(-1))))) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.ok(Object.hasOwn(proto, "__proto__"));
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

function vectorOf(random: () => number): Float32Array {
  return Float32Array.from({ length: 8 }, () => random());
}

function docOf(random: () => number, chars: number): StoredDoc {
  const text = Array.from({ length: chars }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join("");
  return {
    text,
    metadata: { n: Math.floor(random() * 100) },
    passages: [{ start: 0, end: text.length, vector: vectorOf(random) }],
  };
}

/** Writes to one index as the write path does: reads the heads, commits the changes and the next record. */
class IndexWriter {
  readonly docs = new Map<string, StoredDoc>();
  constructor(readonly kv: Deno.Kv, readonly projectId: string, readonly name: string) {}

  async write(updates: [string, StoredDoc | null][]): Promise<number> {
    const current = await this.kv.get<IndexRecord>(["indexes", this.projectId, this.name]);
    const record = current.value!;
    const heads = await readDocHeads(this.kv, record.id, updates.map(([id]) => id));
    const changes: DocChange[] = updates.map(([id, doc]) => ({ id, doc, previousParts: heads.get(id)?.parts ?? 0 }));
    for (const [id, doc] of updates) {
      if (doc === null) this.docs.delete(id);
      else this.docs.set(id, doc);
    }
    const next: IndexRecord = {
      ...record,
      revision: record.revision + 1,
      docCount: this.docs.size,
      passageCount: this.docs.size,
      updatedAt: new Date().toISOString(),
    };
    const bytes = await commitIndexChanges(this.kv, current as Deno.KvEntry<IndexRecord>, changes, next);
    assert.notEqual(bytes, null);
    return next.revision;
  }
}

async function restoredDocs(kv: Deno.Kv, indexId: string): Promise<Map<string, StoredDoc>> {
  const docs = new Map<string, StoredDoc>();
  for await (const [id, doc] of listDocs(kv, indexId)) docs.set(id, doc);
  return docs;
}

Deno.test("an index copied while writes land restores as it was at the copy's revision", async () => {
  const dir = await temporaryDir("quire-backup-unit-");
  const random = mulberry32(43);
  const kv = await Deno.openKv(`${dir}/source.kv`);
  const target = await Deno.openKv(`${dir}/target.kv`);
  try {
    const now = new Date().toISOString();
    await insertProject(kv, { id: "p", keyHash: "h", createdAt: now });
    const record: IndexRecord = {
      id: "index-1",
      projectId: "p",
      name: "busy",
      modelId: "ext-8",
      modelVersion: "e1",
      revision: 0,
      docCount: 0,
      createdAt: now,
      updatedAt: now,
    };
    assert.ok(await createIndexRecord(kv, record, []));
    const writer = new IndexWriter(kv, "p", "busy");
    // 1,200 documents, a few of them long enough to take two parts.
    for (let first = 0; first < 1_200; first += 200) {
      await writer.write(Array.from({ length: 200 }, (_, i) => {
        const id = `d-${String(first + i).padStart(4, "0")}`;
        return [id, docOf(random, (first + i) % 97 === 0 ? 70_000 : 40)];
      }));
    }
    // The copy reads 500 entries at a time; between reads, writes land on both sides of where it has got to.
    let writes = 0;
    const pace = async () => {
      writes++;
      const pick = () => `d-${String(Math.floor(random() * 1_300)).padStart(4, "0")}`;
      const updates: [string, StoredDoc | null][] = [
        [pick(), docOf(random, 30)],
        [pick(), null],
        [pick(), docOf(random, 70_000)],
        [`new-${writes}`, docOf(random, 20)],
      ];
      // A write too large for one commit is staged, and its record names a pending batch until it is applied.
      if (writes === 2) {
        updates.push(...Array.from({ length: 40 }, (): [string, StoredDoc] => [pick(), docOf(random, 3_000)]));
      }
      await writer.write(updates);
    };
    const backup = await writeBackup(kv, `${dir}/backups`, { keep: 3, pace });
    assert.ok(writes >= 2, `${writes} writes during the copy`);
    const copied = await readIndexRecord(kv, "p", "busy");
    assert.equal(backup.manifest.counts.documents, copied!.docCount);

    await restoreBackup(target, backup.path);
    const restored = await readIndexRecord(target, "p", "busy");
    assert.deepEqual(restored, copied);
    assert.deepEqual(await restoredDocs(target, "index-1"), writer.docs);
    assert.deepEqual(await listBackups(`${dir}/backups`), [backup.name]);
  } finally {
    kv.close();
    target.close();
  }
});

Deno.test("a queued job unfinished at the backup restores as failed, its staged documents left out", async () => {
  const dir = await temporaryDir("quire-backup-unit-");
  const kv = await Deno.openKv(`${dir}/source.kv`);
  const target = await Deno.openKv(`${dir}/target.kv`);
  try {
    const now = new Date().toISOString();
    await insertProject(kv, { id: "p", keyHash: "h", createdAt: now });
    const record: IndexRecord = {
      id: "index-2",
      projectId: "p",
      name: "queued",
      modelId: "ext-8",
      modelVersion: "e1",
      revision: 0,
      docCount: 0,
      createdAt: now,
      updatedAt: now,
      job: { id: "job-1", kind: "add", state: "running", done: 0, total: 10, owner: "dead", leaseUntil: 1 },
    };
    assert.ok(await createIndexRecord(kv, record, []));
    const backup = await writeBackup(kv, `${dir}/backups`, { keep: 1 });
    await restoreBackup(target, backup.path);
    const restored = await readIndexRecord(target, "p", "queued");
    assert.deepEqual(restored?.job, {
      id: "job-1",
      kind: "add",
      state: "failed",
      done: 0,
      total: 10,
      error: UNFINISHED_JOB_ERROR,
    });
  } finally {
    kv.close();
    target.close();
  }
});

Deno.test("a manifest that gives no SHA-256 and size of a file is refused before anything is read", async () => {
  const dir = await temporaryDir("quire-backup-unit-");
  const kv = await Deno.openKv(`${dir}/source.kv`);
  try {
    const backup = await writeBackup(kv, `${dir}/backups`, { keep: 1 });
    const manifest = JSON.parse(await Deno.readTextFile(`${backup.path}/${MANIFEST_FILE}`));
    delete manifest.files[0].sha256;
    await Deno.writeTextFile(`${backup.path}/${MANIFEST_FILE}`, JSON.stringify(manifest));
    await assert.rejects(readManifest(backup.path), (error) => {
      assert.ok(error instanceof ApiError && error.status === 422, String(error));
      assert.match(error.message, /gives no SHA-256 and size of "records\.jsonl\.gz": the file cannot be checked/);
      return true;
    });
  } finally {
    kv.close();
  }
});
