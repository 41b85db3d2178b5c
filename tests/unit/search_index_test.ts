/** Unit tests of the search parts: BM25 scores, vector scans, ranking, fusion and filters. */
import assert from "node:assert/strict";
import { loadAnnGraphs } from "../../src/search/ann_graphs.ts";
import { TextIndex } from "../../src/search/text_index.ts";
import { VectorStore } from "../../src/search/vector_store.ts";
import { SearchIndex } from "../../src/search/search_index.ts";
import type { SearchPage, SearchQuery } from "../../src/search/search_query.ts";
import { EXACT_SEARCH_MAX_VECTORS } from "../../src/search/vector_candidates.ts";
import { decodeSearchSnapshot } from "../../src/search/search_snapshot_codec.ts";
import { chunksOf, snapshotBytes, textScores } from "../_helpers.ts";
import { ByteWriter } from "../../src/util/byte_codec.ts";
import { concatBytes } from "../../src/util/concat_bytes.ts";
import type { DocChange, StoredDoc } from "../../src/storage/doc_change_codec.ts";
import { bestPositions, compareCodePoints, rankPage } from "../../src/search/ranking.ts";
import { fuseScores, fusionScale } from "../../src/search/hybrid_fusion.ts";
import { parseFilter } from "../../src/search/metadata_filter.ts";
import { passageSpansOf } from "../../src/search/indexed_doc.ts";

/** A deterministic pseudo-random generator, so that failures reproduce. */
function random(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
}

function textOf(i: number): string {
  return Array.from({ length: 3 + (i * 7) % 13 }, (_, j) => `w${(i * 31 + j * 17) % 300}`).join(" ");
}

/** A stored document with a small vector derived from its text, for unit tests. */
function storedDoc(text: string, metadata?: Record<string, unknown>): StoredDoc {
  const vector = Float32Array.from(
    { length: 8 },
    (_, i) => Math.sin(text.length * (i + 1) + (text.charCodeAt(0) || 0)),
  );
  return metadata === undefined ? whole(text, vector) : { ...whole(text, vector), metadata };
}

/** A document of one passage over its whole text. */
function whole(text: string, vector: Float32Array): StoredDoc {
  return { text, passages: [{ start: 0, end: text.length, vector }] };
}

function change(id: string, doc: StoredDoc | null): DocChange {
  return { id, doc, previousParts: 0 };
}

/** A page without the slots its hits were found at, which depend on the order documents came in. */
function withoutSlots(page: SearchPage): SearchPage {
  return { ...page, hits: page.hits.map(({ slot: _, ...hit }) => hit) };
}

const ALL: SearchQuery = { mode: "fulltext", text: "", offset: 0, limit: 100 };

Deno.test("search results do not depend on the order of inserts, updates and removals", () => {
  const forward = new SearchIndex({ revision: 1 });
  const backward = new SearchIndex({ revision: 1 });
  const direct = new SearchIndex({ revision: 1 });
  for (let i = 0; i < 3000; i++) forward.apply([change(`d${i}`, storedDoc(textOf(i)))]);
  for (let i = 2999; i >= 0; i--) backward.apply([change(`d${i}`, storedDoc(i % 3 === 0 ? "gone soon" : textOf(i)))]);
  for (let i = 0; i < 3000; i += 3) {
    forward.apply([change(`d${i}`, null)]);
    backward.apply([change(`d${i}`, null)]);
  }
  for (let i = 1; i < 3000; i += 3) backward.apply([change(`d${i}`, storedDoc(textOf(i)))]);
  for (let i = 0; i < 3000; i++) if (i % 3 !== 0) direct.apply([change(`d${i}`, storedDoc(textOf(i)))]);
  const vector = storedDoc("w1 w5").passages[0]!.vector;
  for (const mode of ["fulltext", "vector", "hybrid"] as const) {
    const query = { ...ALL, mode, text: "w1 w5 w77 w200", vector };
    const expected = withoutSlots(direct.search(query));
    assert.ok(expected.total > 50, mode);
    assert.deepEqual(withoutSlots(forward.search(query)), expected, mode);
    assert.deepEqual(withoutSlots(backward.search(query)), expected, mode);
  }
});

Deno.test("full-text scores are Okapi BM25 with raw term counts and lengths", () => {
  const index = new TextIndex();
  index.add(0, "apple apple apple pie");
  index.add(1, "apple pie with cream");
  index.add(2, "cherry");
  const bm25 = (tf: number, length: number, holders: number) => {
    const idf = Math.log(1 + (3 - holders + 0.5) / (holders + 0.5));
    return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / 3));
  };
  const exact = (query: string) => textScores(index, index.query(query, { typoTolerance: false, prefix: false }));
  const { slots, scores } = exact("Apple cherry apple");
  const score = new Map([...slots].map((slot, i) => [slot, scores[i]!]));
  assert.deepEqual([...score.keys()].sort(), [0, 1, 2]);
  assert.ok(Math.abs(score.get(0)! - bm25(3, 4, 2)) < 1e-12);
  assert.ok(Math.abs(score.get(1)! - bm25(1, 4, 2)) < 1e-12);
  assert.ok(Math.abs(score.get(2)! - bm25(1, 1, 1)) < 1e-12);
  assert.ok(score.get(0)! > score.get(1)!, "a repeated term counts");
  assert.equal(exact("app").slots.length, 0, "no prefix matches");
  assert.deepEqual([...exact("apples").slots].sort(), [0, 1], "a stemmed word matches");
  index.remove(0, "apple apple apple pie");
  assert.deepEqual([...exact("apple").slots], [1]);
});

Deno.test("BM25 sums kept between searches start from zero each time, even after a filter threw", () => {
  const texts = Array.from({ length: 300 }, (_, i) => textOf(i));
  const used = new TextIndex();
  texts.forEach((text, slot) => used.add(slot, text));
  const fresh = () => {
    const index = new TextIndex();
    texts.forEach((text, slot) => index.add(slot, text));
    return index;
  };
  const exact = { typoTolerance: false, prefix: false };
  const queries = ["w1 w18 w35", "w35 w52", "w1", "w200 w217 w18 w69"];
  assert.throws(() =>
    textScores(used, used.query("w1 w18", exact), () => {
      throw new Error("a broken filter");
    })
  );
  for (const text of queries) {
    const query = used.query(text, exact);
    const rebuilt = fresh();
    assert.deepEqual(textScores(used, query), textScores(rebuilt, rebuilt.query(text, exact)), text);
    used.withScores(query, undefined, ({ slots, scores }, scoreOf) => {
      slots.forEach((slot, i) => assert.equal(scoreOf(slot), scores[i], `${text}: slot ${slot}`));
      const matched = new Set(slots);
      for (let slot = 0; slot < texts.length; slot++) if (!matched.has(slot)) assert.equal(scoreOf(slot), 0);
    });
  }
});

Deno.test("re-indexing a document replaces its terms, vector and metadata", () => {
  const index = new SearchIndex({ revision: 1 });
  index.apply([change("a", storedDoc("red apple", { v: 1 }))]);
  index.apply([change("a", storedDoc("green pear"))]);
  assert.equal(index.search({ ...ALL, text: "apple" }).total, 0);
  assert.deepEqual(index.search({ ...ALL, text: "pear" }).hits.map((hit) => hit.id), ["a"]);
  assert.deepEqual(index.content("a"), { text: "green pear" });
  index.apply([change("a", null), change("a", null)]);
  assert.equal(index.size, 0);
  assert.equal(index.search({ ...ALL, text: "pear" }).total, 0);
});

Deno.test("the vector store scores exact cosines of its own copies", () => {
  const store = new VectorStore();
  const next = random(7);
  const vectors = Array.from({ length: 50 }, () => Float32Array.from({ length: 8 }, () => next() - 0.5));
  vectors.forEach((vector, slot) => store.set(slot, vector));
  vectors[1]!.fill(9); // The store holds its own copy.
  const query = Float32Array.from({ length: 8 }, () => next() - 0.5);
  const { slots, scores } = store.scores(query, [2, 3, 40]);
  assert.deepEqual(slots, [2, 3, 40]);
  slots.forEach((slot, i) => {
    const vector = vectors[slot]!;
    let dot = 0, a = 0, b = 0;
    for (let k = 0; k < 8; k++) {
      dot += query[k]! * vector[k]!;
      a += query[k]! * query[k]!;
      b += vector[k]! * vector[k]!;
    }
    assert.ok(Math.abs(scores[i]! - dot / Math.sqrt(a * b)) < 1e-12, String(slot));
  });
  assert.notEqual(store.row(1)[0], 9);
  assert.throws(() => store.set(60, new Float32Array(3)), /3 dimensions; this index holds 8/);
  assert.throws(() => store.scores(new Float32Array(4), [0]), RangeError);
});

/** A shuffled-looking index just past the exact-scan size, with 16-dimensional vectors. */
function largeDocs(seed: number): DocChange[] {
  const next = random(seed);
  return Array.from({ length: EXACT_SEARCH_MAX_VECTORS + 500 }, (_, i) => {
    const vector = Float32Array.from({ length: 16 }, () => next() - 0.5);
    return change(`id${i}`, { ...whole(textOf(i), vector), ...(i % 2 ? { metadata: { i } } : {}) });
  });
}

Deno.test("a small index's native scan finds what scoring every document finds, never a removed document", async () => {
  const index = new SearchIndex({ revision: 0, graphs: await loadAnnGraphs() });
  const next = random(5);
  const vectors = Array.from({ length: 2_000 }, () => Float32Array.from({ length: 16 }, () => next() - 0.5));
  index.apply(vectors.map((vector, i) => change(`d${i}`, whole(textOf(i), vector))));
  const query = vectors[0]!.map((x) => x + 0.01);
  const search = (exact: boolean) => {
    const vectorQuery: SearchQuery = { mode: "vector", text: "", vector: query, offset: 0, limit: 10 };
    return index.search(exact ? { ...vectorQuery, filter: () => true } : vectorQuery).hits
      .map((hit) => `${hit.id} ${hit.score.toFixed(6)}`);
  };
  assert.deepEqual(search(false), search(true));
  // The nearest documents go, and their passage slots keep their old vectors, nearer the query than any other.
  const nearest = search(true).map((hit) => hit.split(" ")[0]!);
  index.apply(nearest.map((id) => change(id, null)));
  assert.deepEqual(search(false), search(true));
  assert.ok(search(false).every((hit) => !nearest.includes(hit.split(" ")[0]!)), JSON.stringify(search(false)));
});

Deno.test("a snapshot restores the same search results, with holes, metadata and the HNSW graph", async () => {
  const graphs = await loadAnnGraphs();
  const index = new SearchIndex({ revision: 7, graphs });
  const batch = largeDocs(11);
  index.apply(batch);
  index.apply([change("id3", null), change("id8", null)]);
  const restored = await decodeSearchSnapshot(await snapshotBytes(index), { graphs });
  assert.equal(restored.revision, 7);
  assert.equal(restored.size, index.size);
  assert.deepEqual(restored.content("id5"), { text: textOf(5), metadata: { i: 5 } });
  assert.equal(restored.content("id3"), undefined);
  const vector = batch[42]!.doc!.passages[0]!.vector;
  for (const mode of ["fulltext", "vector", "hybrid"] as const) {
    for (const filter of [undefined, parseFilter({ i: { $exists: true } })]) {
      const query: SearchQuery = { mode, text: "w1 w5 w77", vector, filter, offset: 0, limit: 10 };
      assert.deepEqual(restored.search(query), index.search(query), `${mode} ${filter !== undefined}`);
    }
  }
  const again = await decodeSearchSnapshot(await snapshotBytes(restored), { graphs });
  assert.equal(again.size, index.size, "a restored index with empty slots encodes whole again");
  assert.deepEqual(
    again.search({ mode: "fulltext", text: "w1", offset: 0, limit: 5 }),
    index.search({
      mode: "fulltext",
      text: "w1",
      offset: 0,
      limit: 5,
    }),
  );
  restored.apply([change("new", whole("w1 w1 w1", vector))]);
  assert.equal(restored.search({ mode: "vector", text: "", vector, offset: 0, limit: 1 }).hits[0]!.id, "id42");
});

Deno.test("a restored index reads its documents from the stored bytes when asked: a snapshot of it is the one it came from", async () => {
  const graphs = await loadAnnGraphs();
  const index = new SearchIndex({ revision: 3, graphs });
  const batch = largeDocs(12);
  index.apply(batch);
  index.apply([change("id3", null)]);
  const bytes = await snapshotBytes(index);
  const restored = await decodeSearchSnapshot(bytes, { graphs });
  const stored = restored.memoryBytes();
  assert.deepEqual(await snapshotBytes(restored), bytes, "byte for byte, without decoding into the index");
  assert.equal(restored.memoryBytes(), stored, "a snapshot keeps nothing it decoded");
  assert.deepEqual(restored.content("id7"), { text: textOf(7), metadata: { i: 7 } });
  assert.equal(restored.memoryBytes(), stored, "counted as decoded from the load on: reading one adds nothing");
  assert.ok(stored >= index.memoryBytes(), "nor is a restored index counted smaller than the index it came from");
  // Documents never read are replaced and removed: their old words leave the full-text side.
  const vector = batch[5]!.doc!.passages[0]!.vector;
  const changes = [change("id5", whole("fresh words only", vector)), change("id6", null)];
  index.apply(changes);
  restored.apply(changes);
  for (const text of [textOf(5), textOf(6), "fresh words"]) {
    const query: SearchQuery = { mode: "fulltext", text, offset: 0, limit: 20 };
    assert.deepEqual(restored.search(query), index.search(query), text);
  }
  const filtered: SearchQuery = {
    mode: "vector",
    text: "",
    vector,
    filter: parseFilter({ i: { $gt: 100 } }),
    offset: 0,
    limit: 10,
  };
  assert.deepEqual(restored.search(filtered), index.search(filtered));
});

Deno.test("a snapshot decodes alike from chunks of any size; an older format, a cut one or a longer one is refused", async () => {
  const graphs = await loadAnnGraphs();
  const index = new SearchIndex({ revision: 3, graphs });
  const batch = largeDocs(14);
  index.apply(batch);
  const bytes = await snapshotBytes(index);
  assert.ok(bytes.byteLength > 3 << 20, `${bytes.byteLength} bytes: several frames`);
  const vector = batch[5]!.doc!.passages[0]!.vector;
  const query: SearchQuery = { mode: "hybrid", text: "w1 w5", vector, offset: 0, limit: 10 };
  for (const sizes of [[61_440], [4_097, 3], [999_999]]) {
    const restored = await decodeSearchSnapshot(chunksOf(bytes, sizes), { graphs });
    assert.equal(restored.size, index.size);
    assert.equal(restored.pendingGraphInserts, 0, "the graph was read whole");
    assert.deepEqual(restored.search(query), index.search(query), `chunks of ${sizes}`);
  }
  // Format 4 had no frames, and began with its name as a string: the u32 of its length, then its bytes.
  const older = new ByteWriter();
  older.string("quire-search-4");
  older.string("english");
  await assert.rejects(decodeSearchSnapshot(older.bytes()), /Unknown search snapshot format "quire-search-4"/);
  await assert.rejects(decodeSearchSnapshot(bytes.subarray(0, bytes.byteLength - 9), { graphs }), RangeError);
  const longer = concatBytes([bytes, bytes.subarray(0, 20)]);
  await assert.rejects(decodeSearchSnapshot(longer, { graphs }), /goes on after its last record/);
});

Deno.test("a snapshot with a graph loads without USearch and then scans every vector exactly", async () => {
  const graphs = await loadAnnGraphs();
  const index = new SearchIndex({ revision: 1, graphs });
  const docs = largeDocs(12);
  index.apply(docs);
  const restored = await decodeSearchSnapshot(await snapshotBytes(index));
  assert.equal(restored.size, index.size);
  assert.equal(restored.pendingGraphInserts, 0);
  for (const mode of ["vector", "hybrid"] as const) {
    const query: SearchQuery = { mode, text: "w1 w5", vector: docs[7]!.doc!.passages[0]!.vector, offset: 0, limit: 10 };
    // A filter that passes everything makes the index with the graph scan exactly too.
    assert.deepEqual(restored.search(query), index.search({ ...query, filter: () => true }), mode);
  }
  restored.apply([change("id7", null)]);
  assert.equal((await decodeSearchSnapshot(await snapshotBytes(restored), { graphs })).size, index.size - 1);
});

Deno.test("a large snapshot written without a graph gets one from its vectors when loaded with USearch", async () => {
  const exact = new SearchIndex({ revision: 1 });
  const docs = largeDocs(13);
  exact.apply(docs);
  const restored = await decodeSearchSnapshot(await snapshotBytes(exact), { graphs: await loadAnnGraphs() });
  assert.equal(restored.pendingGraphInserts, docs.length, "every vector waits for the graph");
  const query: SearchQuery = {
    mode: "vector",
    text: "",
    vector: docs[99]!.doc!.passages[0]!.vector,
    offset: 0,
    limit: 10,
  };
  assert.deepEqual(restored.search(query), exact.search(query), "until the graph is built, the search is exact");
  restored.flushGraph();
  assert.equal(restored.pendingGraphInserts, 0);
  assert.equal(restored.search(query).hits[0]!.id, "id99");
});

Deno.test("above the exact-scan size, graph candidates keep recall@10 at 0.95 or more", async () => {
  const next = random(5);
  const centers = Array.from({ length: 50 }, () => Float32Array.from({ length: 32 }, () => next() - 0.5));
  const docs = Array.from({ length: EXACT_SEARCH_MAX_VECTORS * 2 }, (_, i) => {
    const vector = Float32Array.from(centers[i % 50]!, (value) => value + (next() - 0.5) * 0.6);
    return change(`v${i}`, whole("", vector));
  });
  const index = new SearchIndex({ revision: 1, graphs: await loadAnnGraphs() });
  index.apply(docs);
  let found = 0;
  for (let q = 0; q < 50; q++) {
    const vector = Float32Array.from(centers[q]!, (value) => value + (next() - 0.5) * 0.6);
    const approximate = index.search({ mode: "vector", text: "", vector, offset: 0, limit: 10 });
    // A filter that passes everything forces the exact scan.
    const exact = index.search({ mode: "vector", text: "", vector, offset: 0, limit: 10, filter: () => true });
    assert.equal(approximate.total, exact.total);
    const truth = new Set(exact.hits.map((hit) => hit.id));
    found += approximate.hits.filter((hit) => truth.has(hit.id)).length;
  }
  assert.ok(found / 500 >= 0.95, `recall@10 ${found / 500}`);
});

Deno.test("above the exact-scan size, hybrid pages agree with one big query and with an exact scan", async () => {
  const next = random(8);
  const words = Array.from({ length: 300 }, (_, i) => `w${i}`);
  const centers = Array.from({ length: 50 }, () => Float32Array.from({ length: 32 }, () => next() - 0.5));
  const docs = Array.from({ length: EXACT_SEARCH_MAX_VECTORS * 2 }, (_, i) => {
    const vector = Float32Array.from(centers[i % 50]!, (value) => value + (next() - 0.5) * 0.6);
    const text = Array.from({ length: 5 + (i % 10) }, () => words[Math.floor(next() * words.length)]).join(" ");
    return change(`h${i}`, whole(text, vector));
  });
  const graphed = new SearchIndex({ revision: 1, graphs: await loadAnnGraphs() });
  const scanned = new SearchIndex({ revision: 1 });
  graphed.apply(docs);
  scanned.apply(docs);
  let agreeing = 0;
  for (let q = 0; q < 10; q++) {
    const vector = Float32Array.from(centers[q]!, (value) => value + (next() - 0.5) * 0.6);
    const query = { mode: "hybrid" as const, text: `${words[q]} ${words[q + 100]}`, vector };
    const full = graphed.search({ ...query, offset: 0, limit: 100 }).hits;
    const pages = [0, 20, 40, 60, 80].flatMap((offset) => graphed.search({ ...query, offset, limit: 20 }).hits);
    assert.deepEqual(pages, full, `query ${q}: five pages of 20 are one page of 100`);
    const exact = new Set(scanned.search({ ...query, offset: 0, limit: 10 }).hits.map((hit) => hit.id));
    agreeing += full.slice(0, 10).filter((hit) => exact.has(hit.id)).length;
  }
  // Before every candidate got its full BM25 score (not only the best text matches), this was 64.
  assert.ok(agreeing >= 95, `the graph's top 10 holds ${agreeing} of the exact scan's 100`);
});

Deno.test("rankPage returns the same pages as a full sort, ties broken by id", () => {
  const next = random(3);
  const ids = Array.from({ length: 500 }, (_, i) => `id${(i * 7919) % 500}`);
  const scores = ids.map(() => Math.round(next() * 20) / 20);
  const sorted = ids.map((id, i) => ({ id, score: scores[i]! }))
    .sort((a, b) => b.score - a.score || compareCodePoints(a.id, b.id));
  for (const [offset, limit] of [[0, 10], [5, 7], [490, 100], [0, 500], [600, 10]] as const) {
    const page = rankPage(scores, (i) => ids[i]!, { offset, limit }).map((i) => ({ id: ids[i]!, score: scores[i]! }));
    assert.deepEqual(page, sorted.slice(offset, offset + limit), `${offset}+${limit}`);
  }
});

Deno.test("bestPositions keeps the first places of a full sort, ties at the cut broken by id", () => {
  const next = random(5);
  const ids = Array.from({ length: 2_000 }, (_, i) => `id${(i * 7919) % 2_000}`);
  // Few distinct scores, so that many tie at every cut; and scores that rarely tie. Up to 125 of 2,000 are selected by a
  // heap, and more by quickselect.
  for (const scores of [ids.map(() => Math.round(next() * 10) / 10), ids.map(() => next())]) {
    const sorted = ids.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || compareCodePoints(ids[a]!, ids[b]!));
    for (const count of [0, 1, 2, 10, 125, 126, 199, 500, 1_999, 2_000, 3_000]) {
      const best = bestPositions(scores, (i) => ids[i]!, count).sort((a, b) => a - b);
      assert.deepEqual(best, sorted.slice(0, count).sort((a, b) => a - b), `the best ${count}`);
    }
  }
});

Deno.test("ids compare by code point, as Deno KV orders keys", () => {
  const ids = ["\u{1F600}", "\uFF01", "b", "a", "ab", ""];
  assert.deepEqual([...ids].sort(compareCodePoints), ["", "a", "ab", "b", "\uFF01", "\u{1F600}"]);
});

Deno.test("hybrid fusion is an even sum of max-scaled BM25 and min-max-scaled cosine, scaled by the pool", () => {
  const scale = fusionScale([0.2, 0.6, 1], 4);
  assert.deepEqual(fuseScores([0.2, 0.6, 1], [0, 2, 4], scale), [0, 0.5 * 0.5 + 0.5 * 0.5, 1]);
  assert.deepEqual(fuseScores([0.1, 1.2], [0, 4], scale), [0, 1], "outside the pool's range, the parts are clamped");
  assert.deepEqual(fuseScores([0.3, 0.3], [0, 0], fusionScale([0.3, 0.3], 0)), [0.5, 0.5], "equal cosines are best");
});

Deno.test("hybrid pages agree with one big query at any depth when every document is scored", () => {
  const next = random(12);
  const words = ["storm", "river", "apple", "stone", "cloud"];
  const docs = Array.from({ length: 450 }, (_, i) => {
    const vector = Float32Array.from({ length: 8 }, () => next() - 0.5);
    const text = Array.from({ length: 2 + (i % 4) }, () => words[Math.floor(next() * words.length)]).join(" ");
    return change(`p${i}`, whole(text, vector));
  });
  const index = new SearchIndex({ revision: 1 });
  index.apply(docs);
  const query = { mode: "hybrid" as const, text: "storm apple", vector: Float32Array.from({ length: 8 }, () => 0.1) };
  const full = index.search({ ...query, offset: 0, limit: 450 }).hits;
  const pages = [0, 100, 200, 300, 400].flatMap((offset) => index.search({ ...query, offset, limit: 100 }).hits);
  assert.deepEqual(pages, full);
  assert.equal(new Set(pages.map((hit) => hit.id)).size, 450, "every document once");
});

Deno.test("filters read own metadata keys only, never the prototype", () => {
  const filter = parseFilter({ constructor: { $exists: true } });
  assert.equal(filter({}), false);
  assert.equal(filter(JSON.parse('{"constructor": 1}')), true);
  assert.equal(parseFilter(JSON.parse('{"__proto__": 1}'))(JSON.parse('{"__proto__": 1}')), true);
  assert.equal(parseFilter({ "a.b": 1 })({ "a.b": 1 }), true, "a literal dotted key wins");
  assert.equal(parseFilter({ "a.b": 1 })({ a: { b: 1 } }), true);
  assert.equal(parseFilter({ x: { $exists: false } })(undefined), true);
});

Deno.test("a hit's slot reads its document while the slot holds it, and the id is looked up once it does not", () => {
  const index = new SearchIndex({ revision: 1 });
  index.apply([change("a", storedDoc("first text")), change("b", storedDoc("second text"))]);
  const [hit] = index.search({ ...ALL, text: "first", textQuery: index.textQuery("first") }).hits;
  assert.equal(hit?.id, "a");
  assert.equal(index.content("a", hit.slot)?.text, "first text");
  // "a" leaves its slot and "c" takes it; "a" comes back elsewhere.
  index.apply([change("a", null), change("c", storedDoc("third text")), change("a", storedDoc("first again"))]);
  assert.equal(index.content("a", hit.slot)?.text, "first again");
  assert.equal(index.content("c", hit.slot)?.text, "third text");
  assert.deepEqual(passageSpansOf(index.content("a", hit.slot)!), [{ start: 0, end: "first again".length }]);
});
