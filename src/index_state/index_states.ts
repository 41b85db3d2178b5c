/**
 * Keeps the search state of recently searched indexes in memory. A search checks currency against the index
 * record it has just read (one KV read), so a current index is never reloaded; writes in this process update the
 * cached state in place, and a write by another process makes the next search reload.
 */
import type { DocChange } from "../storage/doc_records.ts";
import type { IndexRecord } from "../storage/index_records.ts";
import type { AnnGraphs } from "./ann_graphs.ts";
import { type LoadedIndex, loadSearchIndex } from "./load_search_index.ts";
import type { SearchIndex } from "./search_index.ts";

interface CachedIndex {
  /** The revision the state shows once `ready` settles. */
  revision: number;
  ready: Promise<SearchIndex>;
}

/** Search state per index id, at most `capacity` indexes, least recently used first out. */
export class SearchIndexCache {
  readonly #kv: Deno.Kv;
  readonly #capacity: number;
  readonly #entries = new Map<string, CachedIndex>();
  readonly #onLoad: (record: IndexRecord, loaded: LoadedIndex) => void;
  readonly #graphs: AnnGraphs | undefined;

  /**
   * `onLoad` hears of every load, e.g. to schedule a snapshot when much of the state came from the log; `graphs` give
   * large indexes their HNSW graphs (without them, vector search scans exactly).
   */
  constructor(
    kv: Deno.Kv,
    options: { capacity: number; onLoad?: (record: IndexRecord, loaded: LoadedIndex) => void; graphs?: AnnGraphs },
  ) {
    this.#kv = kv;
    this.#capacity = options.capacity;
    this.#onLoad = options.onLoad ?? (() => {});
    this.#graphs = options.graphs;
  }

  /** The search state of `record`'s index at the record's revision or later, loaded only when not cached. */
  get(record: IndexRecord): Promise<SearchIndex> {
    const cached = this.#entries.get(record.id);
    if (cached !== undefined && cached.revision >= record.revision) {
      this.#entries.delete(record.id);
      this.#entries.set(record.id, cached);
      return cached.ready;
    }
    const loading = loadSearchIndex(this.#kv, record, { graphs: this.#graphs }).then((loaded) => {
      this.#onLoad(record, loaded);
      return loaded.index;
    });
    return this.#store(record.id, record.revision, loading);
  }

  /**
   * Applies a committed write that moved an index from revision `from` to `to`. A cached state at `from` is
   * updated in place; any other cached state is dropped, to be reloaded by the next search.
   */
  applyWrite(indexId: string, from: number, to: number, changes: DocChange[]): void {
    const cached = this.#entries.get(indexId);
    if (cached === undefined) return;
    if (cached.revision !== from) {
      this.#entries.delete(indexId);
      return;
    }
    this.#store(
      indexId,
      to,
      cached.ready.then((index) => {
        index.apply(changes);
        index.revision = to;
        return index;
      }),
    );
  }

  /** Forgets an index, e.g. after it was deleted. */
  drop(indexId: string): void {
    this.#entries.delete(indexId);
  }

  #store(indexId: string, revision: number, ready: Promise<SearchIndex>): Promise<SearchIndex> {
    const entry: CachedIndex = { revision, ready };
    this.#entries.delete(indexId);
    this.#entries.set(indexId, entry);
    // A failed load or update is forgotten, so that the next search loads again.
    ready.catch(() => {
      if (this.#entries.get(indexId) === entry) this.#entries.delete(indexId);
    });
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#capacity) break;
      this.#entries.delete(oldest);
    }
    return ready;
  }
}
