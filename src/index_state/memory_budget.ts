/**
 * How many bytes of search state an instance keeps in memory, and which states it keeps: each state is counted at the
 * resident memory it is estimated to take, and the least recently used go first when a new one needs room.
 */
import { indexTooLarge } from "../api/index_errors.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { SearchIndex } from "../search/search_index.ts";

/** Megabytes of search state an isolate keeps on Deno Deploy (512 MB each), and wherever models run on wasm. */
const DEPLOY_SEARCH_CACHE_MB = 256;

/**
 * The budget in bytes: `SEARCH_CACHE_MB` when set; otherwise a quarter of the machine's memory, or the Deploy figure
 * on the wasm backend and wherever the machine cannot be asked (no `--allow-sys`).
 */
export function searchCacheBudgetBytes(configuredMb: number | undefined, backend: "native" | "wasm"): number {
  return (configuredMb ?? defaultMegabytes(backend)) * 1024 * 1024;
}

function defaultMegabytes(backend: "native" | "wasm"): number {
  if (backend === "wasm") return DEPLOY_SEARCH_CACHE_MB;
  try {
    return Math.floor(Deno.systemMemoryInfo().total / 4 / (1024 * 1024));
  } catch {
    return DEPLOY_SEARCH_CACHE_MB;
  }
}

/**
 * Resident memory per byte that {@link SearchIndex.memoryBytes} estimates: V8's object headers, hidden classes and free
 * space, and the graph's allocator. Measured as the RSS growth of three 20,000-document indexes of the benchmark's
 * corpus (`deno task bench:instances`) against their estimate.
 */
const RESIDENT_PER_ESTIMATED_BYTE = 1.35;

/** The resident memory a state takes, estimated: what the budget counts. */
export function residentBytes(index: SearchIndex): number {
  return Math.ceil(index.memoryBytes() * RESIDENT_PER_ESTIMATED_BYTE);
}

/** One index's search state in memory, or on its way there. */
export interface CachedIndex {
  /** The revision the state shows once `ready` settles. */
  revision: number;
  ready: Promise<SearchIndex>;
  /** The state's resident memory, once measured. */
  bytes: number;
}

/** Search states by index id, least recently used first, within a count of states and a budget of bytes. */
export class MemoryBudget {
  readonly #entries = new Map<string, CachedIndex>();
  readonly #metrics: Metrics;
  /** The most bytes of search state kept (`SEARCH_CACHE_MB`). */
  readonly budgetBytes: number;
  /** The most states kept. */
  readonly #capacity: number;

  /** Hears of each state the budget lets go (not of one replaced by a newer state of the same index). */
  readonly #onEvict: (entry: CachedIndex) => void;

  constructor(
    limits: { budgetBytes: number; capacity: number },
    metrics: Metrics,
    onEvict: (entry: CachedIndex) => void = () => {},
  ) {
    this.budgetBytes = limits.budgetBytes;
    this.#capacity = limits.capacity;
    this.#metrics = metrics;
    this.#onEvict = onEvict;
  }

  /** The state of an index, without marking it used. */
  peek(indexId: string): CachedIndex | undefined {
    return this.#entries.get(indexId);
  }

  /** Whether an index's state is kept. */
  has(indexId: string): boolean {
    return this.#entries.has(indexId);
  }

  /** The measured bytes of all states kept. */
  totalBytes(): number {
    let total = 0;
    for (const entry of this.#entries.values()) total += entry.bytes;
    return total;
  }

  /** Marks a state as the most recently used. */
  touch(indexId: string, entry: CachedIndex): void {
    this.#entries.delete(indexId);
    this.#entries.set(indexId, entry);
  }

  /**
   * Keeps the state that `ready` brings as the most recently used, with the bytes last measured for the index, and
   * forgets the oldest beyond the capacity. A state whose load or update fails is forgotten, so that the next search
   * loads again.
   */
  store(indexId: string, revision: number, ready: Promise<SearchIndex>): CachedIndex {
    const replaced = this.#entries.get(indexId);
    if (replaced !== undefined) {
      // A newer state that is a new object (a reload, not an update in place) lets the replaced one go.
      Promise.all([replaced.ready, ready]).then(([old, next]) => {
        if (old !== next) this.#onEvict(replaced);
      }, () => {});
    }
    const entry: CachedIndex = { revision, ready, bytes: replaced?.bytes ?? 0 };
    this.touch(indexId, entry);
    ready.catch(() => {
      if (this.#entries.get(indexId) === entry) this.#entries.delete(indexId);
    });
    for (const [oldest, evicted] of this.#entries) {
      if (this.#entries.size <= this.#capacity) break;
      this.#letGo(oldest, evicted);
    }
    return entry;
  }

  /** Forgets an index's state. */
  delete(indexId: string): void {
    const entry = this.#entries.get(indexId);
    if (entry !== undefined) this.#letGo(indexId, entry);
  }

  /**
   * Records the size of `entry`, `index` once ready, unless a newer state replaced it, then evicts the least recently
   * used others until all fit; 507 naming the index when it cannot fit alone. Returns whether the entry is kept.
   */
  measure(record: { id: string; name: string }, entry: CachedIndex, index: SearchIndex): boolean {
    if (this.#entries.get(record.id) !== entry) return false;
    entry.bytes = residentBytes(index);
    if (entry.bytes > this.budgetBytes) {
      this.#letGo(record.id, entry);
      this.#metrics.countEviction();
      throw indexTooLarge(record.name, entry.bytes, this.budgetBytes);
    }
    this.evictFor(0, record.id);
    return true;
  }

  /** Whether a state of `bytes` fits beside the others without evicting any. */
  hasRoomFor(bytes: number): boolean {
    return this.#entries.size < this.#capacity && this.totalBytes() + bytes <= this.budgetBytes;
  }

  /**
   * Evicts the least recently used states, but `keep`'s, until `incoming` more bytes fit in the budget; whether it
   * evicted any.
   */
  evictFor(incoming: number, keep: string): boolean {
    let total = this.totalBytes();
    let evicted = false;
    for (const [indexId, other] of this.#entries) {
      if (total + incoming <= this.budgetBytes) break;
      if (indexId === keep) continue;
      this.#letGo(indexId, other);
      total -= other.bytes;
      evicted = true;
      this.#metrics.countEviction();
    }
    return evicted;
  }

  /** Forgets the state `entry` of an index, and tells of it. */
  #letGo(indexId: string, entry: CachedIndex): void {
    this.#entries.delete(indexId);
    this.#onEvict(entry);
  }
}
