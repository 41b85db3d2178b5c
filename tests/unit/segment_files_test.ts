import assert from "node:assert/strict";
import { copying, SegmentFiles } from "../../src/segments/segment_files.ts";
import { temporaryDir } from "../_helpers.ts";

const HOUR_MS = 60 * 60 * 1000;

async function bytesOf(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Blob(await Array.fromAsync(chunks, (chunk) => chunk.slice())).arrayBuffer());
}

/** Writes `bytes` as a copy of `versionId` of `indexId`, 60 KiB at a time as a load hands them on. */
async function keepCopy(files: SegmentFiles, indexId: string, versionId: string, bytes: Uint8Array): Promise<void> {
  const copy = (await files.begin(indexId))!;
  const chunks = async function* () {
    for (let at = 0; at < bytes.byteLength; at += 61_440) yield bytes.subarray(at, at + 61_440);
  };
  assert.deepEqual(await bytesOf(copying(chunks(), copy)), bytes);
  await copy.keep(versionId, bytes.byteLength);
}

function randomBytes(count: number): Uint8Array {
  const bytes = new Uint8Array(count);
  for (let at = 0; at < count; at += 65_536) crypto.getRandomValues(bytes.subarray(at, at + 65_536));
  return bytes;
}

Deno.test("a copy reads back whole under its version, and only with the size the pointer names", async () => {
  const dir = await temporaryDir("quire-segments-");
  const files = (await SegmentFiles.open(`${dir}/segments`))!;
  const bytes = randomBytes(3 * 1024 * 1024 + 17);
  await keepCopy(files, "index-a", "0000000001-v", bytes);
  assert.deepEqual(await bytesOf((await files.read("index-a", "0000000001-v", bytes.byteLength))!), bytes);
  assert.equal(await files.read("index-a", "0000000001-v", bytes.byteLength + 1), null);
  assert.equal(await files.read("index-a", "0000000002-v", bytes.byteLength), null);
  assert.equal(await files.read("index-b", "0000000001-v", bytes.byteLength), null);
  // Only the copy is left: no temporary file.
  assert.deepEqual([...Deno.readDirSync(`${dir}/segments/index-a`)].map((entry) => entry.name), [
    "0000000001-v.snapshot",
  ]);
});

Deno.test("a copy of the wrong length, or dropped, never appears under a version's name", async () => {
  const dir = await temporaryDir("quire-segments-");
  const files = (await SegmentFiles.open(dir))!;
  const short = (await files.begin("index-a"))!;
  await short.write(new Uint8Array(100));
  await short.keep("0000000001-v", 101);
  const dropped = (await files.begin("index-a"))!;
  await dropped.write(new Uint8Array(100));
  await dropped.drop();
  assert.deepEqual([...Deno.readDirSync(`${dir}/index-a`)], []);
});

Deno.test("keeping a version prunes older ones, not newer ones; a sweep keeps each index's current one", async () => {
  const dir = await temporaryDir("quire-segments-");
  const files = (await SegmentFiles.open(dir))!;
  await keepCopy(files, "index-a", "0000000002-v", new Uint8Array(10));
  await keepCopy(files, "index-a", "0000000003-v", new Uint8Array(10));
  await keepCopy(files, "index-a", "0000000001-v", new Uint8Array(10));
  const names = (indexId: string) => [...Deno.readDirSync(`${dir}/${indexId}`)].map((entry) => entry.name).sort();
  assert.deepEqual(names("index-a"), ["0000000001-v.snapshot", "0000000003-v.snapshot"]);
  await keepCopy(files, "index-b", "0000000001-v", new Uint8Array(10));
  // A temporary file of a writer that died an hour ago, and one of a writer still at work.
  Deno.writeFileSync(`${dir}/index-a/.tmp-${Date.now() - HOUR_MS - 1}-x`, new Uint8Array(1));
  Deno.writeFileSync(`${dir}/index-a/.tmp-${Date.now()}-y`, new Uint8Array(1));
  await files.sweep((indexId) => Promise.resolve(indexId === "index-a" ? "0000000003-v" : undefined));
  const left = names("index-a");
  assert.equal(left.length, 2);
  assert.ok(left.includes("0000000003-v.snapshot") && left.some((name) => name.endsWith("-y")), left.join());
  assert.throws(() => Deno.statSync(`${dir}/index-b`), Deno.errors.NotFound);
});

Deno.test("a directory that cannot be written gives no copies rather than an error", async () => {
  assert.equal(await SegmentFiles.open("/dev/null/segments"), undefined);
});
