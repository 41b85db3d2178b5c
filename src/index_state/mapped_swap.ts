/**
 * Swaps an index's state that writes built up in memory for a load of the snapshot this process has just written, from
 * the copy it kept on this host: that load maps the rows and the graph that the copy keeps beside it (see
 * `segment_copy.ts`) and keeps texts as bytes, where the built state holds every vector, text and list in the heap. A
 * process that took in a million documents held 2.9-3.0 GiB until a restart; this gives it what a restart gives.
 *
 * A swap waits until the index has had no write for {@link QUIET_MS}, so that a bulk load, which writes a snapshot each
 * time its index grows by a tenth, pays one load at its end rather than one per snapshot. The writes that land while it
 * loads are replayed from the log onto the new state before it takes the old one's place.
 */
import type { SearchIndex } from "../search/search_index.ts";
import { replayLog } from "./load_search_index.ts";
import type { IndexRecord } from "../storage/index_records.ts";
import { readSnapshotPointer, type SnapshotPointer } from "../storage/snapshot_store.ts";
import type { CachedIndex } from "./memory_budget.ts";

/** How long an index goes without a write before its state is swapped. */
const QUIET_MS = 1_000;
/** Replays of the writes that landed during a swap's load before it gives up on a busy index. */
const MAX_CATCH_UPS = 3;

/** What a swap asks of the states in memory. */
export interface SwapStates {
  /** The index's state in memory, if one is kept. */
  peek(indexId: string): CachedIndex | undefined;
  /** Loads the index at `record` from the copy of `pointer`'s snapshot without keeping it; undefined without room. */
  loadCopy(record: IndexRecord, pointer: SnapshotPointer): Promise<SearchIndex | undefined>;
  /** Keeps `index` in place of the state in memory, which it matches. */
  replace(record: IndexRecord, index: SearchIndex): void;
  /** Whether a snapshot of the index is being written. */
  snapshotWriting(indexId: string): boolean;
  /** Whether the process is closing. */
  closing(): boolean;
}

/** The swaps due after snapshots, per index, each waiting for its index to go quiet. */
export class MappedSwaps {
  readonly #kv: Deno.Kv;
  readonly #states: SwapStates;
  /** When each index was last written. */
  readonly #lastWrite = new Map<string, number>();
  /** The snapshot version each index's swap waits to load: a newer snapshot's swap replaces an older one's. */
  readonly #due = new Map<string, string>();
  /** The swap under way of each index. */
  readonly #underWay = new Map<string, Promise<void>>();

  constructor(kv: Deno.Kv, states: SwapStates) {
    this.#kv = kv;
    this.#states = states;
  }

  /** Hears of a write to an index, which puts its swap off. */
  noteWrite(indexId: string): void {
    this.#lastWrite.set(indexId, performance.now());
  }

  /** Forgets a deleted index. */
  drop(indexId: string): void {
    this.#lastWrite.delete(indexId);
    this.#due.delete(indexId);
  }

  /**
   * Swaps the index's state for a load of the snapshot version `versionId`, whose copy is kept here, once the index has
   * gone quiet; gives up when a newer snapshot is written or is being written (it asks again once written), the index
   * is deleted, or the process closes. Swaps of one index run one at a time.
   */
  async swapWhenQuiet(record: IndexRecord, versionId: string): Promise<void> {
    this.#due.set(record.id, versionId);
    for (;;) {
      if (this.#states.closing() || this.#due.get(record.id) !== versionId) return;
      const quietFor = performance.now() - (this.#lastWrite.get(record.id) ?? 0);
      if (quietFor < QUIET_MS) {
        await new Promise((resolve) => setTimeout(resolve, QUIET_MS - quietFor));
        continue;
      }
      if (this.#states.snapshotWriting(record.id)) return;
      const earlier = this.#underWay.get(record.id);
      if (earlier === undefined) break;
      await earlier;
    }
    this.#due.delete(record.id);
    const swap = this.#swap(record, versionId);
    this.#underWay.set(record.id, swap);
    try {
      await swap;
    } finally {
      this.#underWay.delete(record.id);
    }
  }

  /** Loads the copy of the snapshot version, replays the writes since, and swaps it in. */
  async #swap(record: IndexRecord, versionId: string): Promise<void> {
    const cached = this.#states.peek(record.id);
    const pointer = await readSnapshotPointer(this.#kv, record.id);
    if (cached === undefined || pointer?.versionId !== versionId) return;
    const index = await this.#states.loadCopy({ ...record, revision: cached.revision }, pointer);
    if (index === undefined) return;
    for (let attempt = 0; attempt < MAX_CATCH_UPS && !this.#states.closing(); attempt++) {
      // Writes that landed meanwhile are replayed, until the new state shows what the old one does.
      const current = this.#states.peek(record.id);
      if (current === undefined) return;
      if (current.revision <= index.revision) return this.#states.replace(record, index);
      if (await replayLog(this.#kv, record.id, index, current.revision) === null) return;
    }
  }
}
