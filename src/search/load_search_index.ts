/** Builds an index's search state from storage. */
import { listDocs } from "../storage/doc_records.ts";
import type { IndexRecord } from "../storage/index_records.ts";
import { indexKey } from "../storage/kv_keys.ts";
import { readSnapshot } from "../storage/snapshot_store.ts";
import { SearchIndex } from "./search_index.ts";

/** Reads of the document records before settling for one that a concurrent write may have overlapped. */
const MAX_LIST_ATTEMPTS = 3;

/**
 * Loads the search state of `record`'s index at its revision or later: from the snapshot when it is that recent,
 * otherwise from the document records, read again while a write lands during the read.
 */
export async function loadSearchIndex(kv: Deno.Kv, record: IndexRecord): Promise<SearchIndex> {
  const snapshot = await readSnapshot(kv, record.id);
  if (snapshot !== null && snapshot.revision >= record.revision) {
    const index = new SearchIndex();
    index.apply(snapshot.docs);
    return index;
  }
  let revision = record.revision;
  for (let attempt = 1;; attempt++) {
    const index = new SearchIndex();
    for await (const [id, doc] of listDocs(kv, record.id)) index.apply([{ id, doc, previousParts: 0 }]);
    const after = await kv.get<IndexRecord>(indexKey(record.projectId, record.name));
    const unchanged = after.value?.id !== record.id || after.value.revision === revision;
    if (unchanged || attempt === MAX_LIST_ATTEMPTS) return index;
    revision = after.value!.revision;
  }
}
