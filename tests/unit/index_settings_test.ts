/**
 * Index settings below the API: synonyms compiled as the index reads text, their expansion of a full-text query
 * (aligned with the text index's words, weighted by inverse document frequency), pins paging with the ranking, and
 * settings versions in the store (read once, replaced, collected, backed up and restored).
 */
import assert from "node:assert/strict";
import { analyzerFor } from "../../src/fulltext/analyzer.ts";
import { compileSynonyms, synonymMatches } from "../../src/fulltext/synonyms.ts";
import { SearchIndex } from "../../src/search/search_index.ts";
import { searchWithSettings } from "../../src/search/settings_search.ts";
import type { SearchQuery } from "../../src/search/search_query.ts";
import { IndexSettingsCache, LoadedSettings } from "../../src/index_state/index_settings.ts";
import { collectGarbage } from "../../src/storage/garbage_collector.ts";
import { createIndexRecord, type IndexRecord, readIndexRecord } from "../../src/storage/index_records.ts";
import { insertProject } from "../../src/storage/project_records.ts";
import { writeBackup } from "../../src/backup/write_backup.ts";
import { restoreBackup } from "../../src/backup/restore_backup.ts";
import { temporaryDir } from "../_helpers.ts";
import { indexKey, settingsPrefix } from "../../src/storage/kv_keys.ts";
import { deleteSettingsVersion, writeSettingsVersion } from "../../src/storage/settings_records.ts";
import { ABANDONED_AFTER_MS } from "../../src/storage/timed_id.ts";
import { parseFilter } from "../../src/search/metadata_filter.ts";

const english = analyzerFor("english");

function indexOf(docs: [string, string, Record<string, unknown>?][]): SearchIndex {
  const index = new SearchIndex({ revision: 1 });
  const vector = Float32Array.of(1, 0.5, 0.25, 0);
  index.apply(docs.map(([id, text, metadata]) => ({
    id,
    doc: { text, ...(metadata === undefined ? {} : { metadata }), passages: [{ start: 0, end: text.length, vector }] },
  })));
  return index;
}

function fulltext(text: string, extra: Partial<SearchQuery> = {}): SearchQuery {
  return { mode: "fulltext", text, match: { typoTolerance: false, prefix: false }, offset: 0, limit: 100, ...extra };
}

Deno.test("synonyms are read as queries are: folded, stemmed, stop words dropped; groups find each other, one-way ones do not", () => {
  const map = compileSynonyms([
    { words: ["Sofás", "couches", "the settee"] },
    { from: "NYC", to: ["New York", "new york city"] },
  ], english)!;
  assert.deepEqual([...map.groups.keys()].sort(), ["couch", "nyc", "sette", "sofa"].sort());
  assert.equal(map.longest, 1);
  const [sofa] = synonymMatches(map, ["sofa"]);
  assert.deepEqual(sofa!.targets, [["couch"], ["sette"]]);
  const [nyc] = synonymMatches(map, ["cheap", "nyc"]);
  assert.deepEqual(nyc, { start: 1, length: 1, targets: [["new", "york"], ["new", "york", "citi"]] });
  assert.deepEqual(synonymMatches(map, ["new", "york"]), [], "one way only");
  const phrases = compileSynonyms([{ words: ["new york", "nyc"] }], english)!;
  assert.deepEqual(synonymMatches(phrases, ["hotel", "new", "york"]), [{ start: 1, length: 2, targets: [["nyc"]] }]);
});

Deno.test("a query's synonyms join the text index's words in its order, repeats and stop words included", () => {
  const index = indexOf([["1", "running shoes"], ["2", "trainers for the road"], ["3", "running late"], ["4", "red"]]);
  const settings = new LoadedSettings({ synonyms: [{ words: ["running shoes", "trainers"] }], pins: [] }, english);
  const search = (query: string) => searchWithSettings(index, settings.forQuery(query), fulltext(query));
  assert.deepEqual(search("the running red shoes").hits.map((hit) => hit.id).sort(), ["1", "3", "4"], "no phrase");
  // "running" and "runs" are two words of one term: the text index keeps a list of matches for each.
  const phrase = search("the running runs shoes");
  assert.deepEqual(phrase.hits.map((hit) => hit.id), ["1", "3", "2"]);
  assert.ok(phrase.terms!.has("trainer"));
  // The other way, a phrase counts as all of its words: "running late" holds one of them.
  const trainers = search("trainers");
  assert.deepEqual(trainers.hits.map((hit) => hit.id), ["2", "1", "3"]);
  assert.ok(trainers.hits[1]!.score > trainers.hits[2]!.score);
});

Deno.test("a rare synonym scores below the query's own common word in documents of one length", () => {
  const docs: [string, string][] = Array.from({ length: 30 }, (_, i) => [`sofa${i}`, `sofa number ${i}`]);
  docs.push(["couch", "couch number 99"], ["other", "chair number 98"]);
  const index = indexOf(docs);
  const settings = new LoadedSettings({ synonyms: [{ words: ["sofa", "couch"] }], pins: [] }, english);
  const page = searchWithSettings(index, settings.forQuery("sofa"), fulltext("sofa"));
  assert.equal(page.hits.length, 31);
  assert.equal(page.hits.at(-1)!.id, "couch", "found, after every exact match");
  // Without the scaling by inverse document frequency, the rare word would outrank all 30.
  assert.ok(page.hits.at(-1)!.score < page.hits[0]!.score);
});

Deno.test("pins take the first places and page with the ranking at any offset, with filters and sort", () => {
  const docs: [string, string, Record<string, unknown>][] = Array.from(
    { length: 2_000 },
    (_, i) => [`d${i}`, `refund ${i % 7 === 0 ? "refund" : ""} note ${i}`, { shop: i % 2, rank: i % 13 }],
  );
  docs.push(["policy", "returns policy", { shop: 1, rank: 0 }]);
  const index = indexOf(docs);
  const pinned = ["policy", "d5", "missing", "d8", "d5"];
  const settings = new LoadedSettings({ synonyms: [], pins: [{ query: "refunds", ids: pinned }] }, english);
  for (
    const extra of [{}, { filter: parseFilter({ shop: 1 }) }, { sort: [{ field: "rank", order: "desc" as const }] }]
  ) {
    const whole = searchWithSettings(index, settings.forQuery("Refund"), fulltext("Refund", { ...extra, limit: 300 }));
    const ids = whole.hits.map((hit) => hit.id);
    assert.equal(new Set(ids).size, ids.length, "each document once");
    const expectedPins = "filter" in extra ? ["policy", "d5"] : ["policy", "d5", "d8"];
    assert.deepEqual(ids.slice(0, expectedPins.length), expectedPins);
    assert.ok(whole.hits.slice(0, expectedPins.length).every((hit) => hit.pinned));
    assert.ok(!whole.hits.slice(expectedPins.length).some((hit) => hit.pinned));
    // "policy" does not hold the query's word: it joins the total; the others were counted already.
    const plain = index.search(fulltext("Refund", { ...extra, limit: 1 }));
    assert.equal(whole.total, plain.total + 1);
    for (const [offset, limit] of [[0, 1], [1, 2], [2, 5], [3, 7], [150, 100]] as [number, number][]) {
      const page = searchWithSettings(
        index,
        settings.forQuery("refund"),
        fulltext("refund", { ...extra, offset, limit }),
      );
      assert.deepEqual(page.hits.map((hit) => hit.id), ids.slice(offset, offset + limit), `${offset}+${limit}`);
      assert.equal(page.total, whole.total);
    }
  }
});

Deno.test("a settings version is read once, a replaced one leads to the record's current one, and old ones are collected", async () => {
  using kv = await Deno.openKv(":memory:");
  const now = new Date().toISOString();
  const record: IndexRecord = {
    id: "i1",
    projectId: "p",
    name: "shop",
    modelId: "m",
    modelVersion: "1",
    revision: 1,
    docCount: 0,
    createdAt: now,
    updatedAt: now,
  };
  const first = { synonyms: [{ words: ["sofa", "couch"] }], pins: [] };
  const withFirst = { ...record, settings: await writeSettingsVersion(kv, "i1", first) };
  await kv.set(indexKey("p", "shop"), withFirst);
  const cache = new IndexSettingsCache(kv);
  const loaded = await cache.of(withFirst);
  assert.deepEqual(loaded.settings, first);
  assert.equal(await cache.of(withFirst), loaded, "kept, not read again");

  const second = { synonyms: [], pins: [{ query: "refund", ids: ["a"] }] };
  const withSecond = { ...record, settings: await writeSettingsVersion(kv, "i1", second) };
  await kv.set(indexKey("p", "shop"), withSecond);
  await deleteSettingsVersion(kv, "i1", withFirst.settings.id);
  const fresh = new IndexSettingsCache(kv);
  assert.deepEqual((await fresh.of(withFirst)).settings, second, "a reader holding the old record gets the new ones");

  // A version that a change wrote but never committed is collected an hour on; the named one stays.
  const stray = await writeSettingsVersion(kv, "i1", first);
  const versions = async () => {
    const ids = new Set<unknown>();
    for await (const { key } of kv.list({ prefix: settingsPrefix("i1") })) ids.add(key[2]);
    return ids;
  };
  await collectGarbage(kv);
  assert.deepEqual(await versions(), new Set([withSecond.settings.id, stray.id]));
  await collectGarbage(kv, Date.now() + ABANDONED_AFTER_MS + 1);
  assert.deepEqual(await versions(), new Set([withSecond.settings.id]));
});

Deno.test("a backup carries an index's settings, and the restored index reads them", async () => {
  const dir = await temporaryDir("quire-settings-backup-");
  const kv = await Deno.openKv(`${dir}/source.kv`);
  const target = await Deno.openKv(`${dir}/target.kv`);
  try {
    const now = new Date().toISOString();
    await insertProject(kv, { id: "p", keyHash: "h", createdAt: now });
    // Large enough to take several chunks of the store.
    const settings = {
      synonyms: Array.from({ length: 4_000 }, (_, i) => ({ words: [`word${i}`, `other${i}`, `third${i}`] })),
      pins: [{ query: "refund", ids: ["d1"] }],
    };
    const record: IndexRecord = {
      id: "index-1",
      projectId: "p",
      name: "shop",
      modelId: "ext-8",
      modelVersion: "e1",
      revision: 1,
      docCount: 1,
      createdAt: now,
      updatedAt: now,
      settings: await writeSettingsVersion(kv, "index-1", settings),
    };
    assert.ok(record.settings!.chunks > 1);
    const text = "refund";
    const doc = { text, passages: [{ start: 0, end: text.length, vector: Float32Array.of(1, 0, 0, 0, 0, 0, 0, 0) }] };
    assert.ok(await createIndexRecord(kv, record, [{ id: "d1", doc, previousParts: 0 }]));
    const backup = await writeBackup(kv, `${dir}/backups`, { keep: 1 });
    await restoreBackup(target, backup.path);
    const restored = await readIndexRecord(target, "p", "shop");
    assert.deepEqual(restored?.settings, record.settings);
    assert.deepEqual((await new IndexSettingsCache(target).of(restored!)).settings, settings);
  } finally {
    kv.close();
    target.close();
  }
});
