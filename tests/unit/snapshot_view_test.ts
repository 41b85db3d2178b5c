/** A snapshot encoded in slices shows its index as it stood when the encoding began, while writes go on landing. */
import assert from "node:assert/strict";
import { loadAnnGraphs } from "../../src/search/ann_graphs.ts";
import { SearchIndex } from "../../src/search/search_index.ts";
import type { SearchQuery } from "../../src/search/search_query.ts";
import { EXACT_SEARCH_MAX_VECTORS } from "../../src/search/vector_candidates.ts";
import { decodeSearchSnapshot } from "../../src/search/search_snapshot_codec.ts";
import { snapshotBytes } from "../_helpers.ts";
import type { DocChange, StoredDoc } from "../../src/storage/doc_change_codec.ts";
import { parseFilter } from "../../src/search/metadata_filter.ts";
import type { Slices } from "../../src/util/time_slices.ts";
import { normals } from "../_vectors.ts";
import { passageSpansOf } from "../../src/search/indexed_doc.ts";

const DIMS = 16;
const normal = normals(5);

function vector(): Float32Array {
  return Float32Array.from({ length: DIMS }, normal);
}

function textOf(i: number): string {
  return Array.from({ length: 3 + (i * 7) % 13 }, (_, j) => `w${(i * 31 + j * 17) % 300}`).join(" ");
}

/** A document of one passage, or of two (split at its first space) for every third `i`. */
function docOf(i: number, text = textOf(i)): StoredDoc {
  if (i % 3 !== 0) return { text, metadata: { i }, passages: [{ start: 0, end: text.length, vector: vector() }] };
  const cut = text.indexOf(" ");
  return {
    text,
    passages: [{ start: 0, end: cut, vector: vector() }, { start: cut, end: text.length, vector: vector() }],
  };
}

function change(id: string, doc: StoredDoc | null): DocChange {
  return { id, doc, previousParts: 0 };
}

const COUNT = EXACT_SEARCH_MAX_VECTORS + 500;

/**
 * The writes of the `k`th pause: a replacement and a delete of slots the encoding has not reached (at first), a new
 * document in a freed slot, and one early document replaced again and again.
 */
function writes(k: number): DocChange[] {
  return [
    change(`d${COUNT - 1 - 2 * k}`, docOf(k, `${textOf(k + 1)} replaced${k}`)),
    change(`d${COUNT - 2 - 2 * k}`, null),
    change(`new${k}`, docOf(k + 1, `fresh${k} w7`)),
    change("d2", docOf(2, `again${k}`)),
  ];
}

Deno.test("a snapshot encoded in slices shows the index as it stood when it began, whatever writes land meanwhile", async () => {
  const graphs = await loadAnnGraphs();
  const index = new SearchIndex({ revision: 3, graphs });
  index.apply(Array.from({ length: COUNT }, (_, i) => change(`d${i}`, docOf(i))));
  index.apply([change("d5", null), change("d9", null)]);
  // Documents whose vectors wait to join the graph: the snapshot's graph lacks them, and they wait again once loaded.
  const waiting = Array.from({ length: 100 }, (_, i) => change(`w${i}`, docOf(COUNT + i)));
  index.apply(waiting);
  const pending = index.pendingGraphInserts;
  assert.ok(pending >= 100);
  const before = await decodeSearchSnapshot(await snapshotBytes(index), { graphs });

  let steps = 0;
  let pauses = 0;
  const slices: Slices = {
    get due() {
      return ++steps % 50 === 0;
    },
    next() {
      pauses++;
      index.apply(writes(pauses), { revision: 3 + pauses });
      return Promise.resolve();
    },
  };
  const during = await decodeSearchSnapshot(await snapshotBytes(index, slices), { graphs });
  assert.ok(pauses > 200, `writes landed at ${pauses} pauses`);
  assert.ok(index.revision > 200 && index.content("d2")!.text.startsWith("again"), "the index itself moved on");

  assert.equal(during.revision, 3);
  assert.equal(during.size, before.size);
  for (let i = 0; i < COUNT; i++) {
    const id = `d${i}`;
    assert.deepEqual(during.content(id), before.content(id), id);
    const spans = (index: SearchIndex) => {
      const content = index.content(id);
      return content === undefined ? [] : passageSpansOf(content);
    };
    assert.deepEqual(spans(during), spans(before), id);
  }
  assert.equal(during.content("new1"), undefined);
  assert.equal(before.pendingGraphInserts, pending);
  assert.equal(during.pendingGraphInserts, pending);
  const own = waiting[7]!.doc!.passages[0]!.vector;
  assert.equal(during.search({ mode: "vector", text: "", vector: own, offset: 0, limit: 1 }).hits[0]!.id, "w7");
  const probes = [vector(), vector(), docOf(1).passages[0]!.vector];
  for (const text of ["w7", "w1 w5 w77", "replaced1", "replaced150", "fresh1", "again1", "w299 w3"]) {
    for (const mode of ["fulltext", "vector", "hybrid"] as const) {
      for (const filter of [undefined, parseFilter({ i: { $exists: true } })]) {
        const query: SearchQuery = { mode, text, vector: probes[text.length % 3], filter, offset: 0, limit: 10 };
        assert.deepEqual(during.search(query), before.search(query), `${mode} "${text}" ${filter !== undefined}`);
      }
    }
  }
  const typed: SearchQuery = {
    mode: "fulltext",
    text: "w29",
    match: { typoTolerance: true, prefix: true },
    offset: 0,
    limit: 10,
  };
  assert.deepEqual(during.search(typed), before.search(typed));

  // Once the encoding is over, changes are no longer copied for it: a second snapshot shows the index as it is now.
  const after = await decodeSearchSnapshot(await snapshotBytes(index), { graphs });
  assert.equal(after.size, index.size);
  assert.deepEqual(after.content("d2"), index.content("d2"));
  assert.deepEqual(after.content(`new${pauses}`), index.content(`new${pauses}`));
});
