/**
 * Short-lived in-memory copies of small, hot records (projects for authentication, index records for `getIndex`), so
 * that metadata reads need no store read. A write through this process invalidates its key at once; a write by
 * another process sharing the store (the CLI, another server) shows within the time to live.
 */

interface Cached {
  value: unknown;
  expires: number;
}

/** Reads records through a cache that forgets each entry after `ttlMs` (0 turns caching off). */
export class RecordCache {
  readonly #kv: Deno.Kv;
  readonly #ttlMs: number;
  readonly #entries = new Map<string, Cached>();
  /** Bumped by each invalidation, so that a read that overlapped it does not store what it read. */
  readonly #generations = new Map<string, number>();

  constructor(kv: Deno.Kv, ttlMs: number) {
    this.#kv = kv;
    this.#ttlMs = ttlMs;
  }

  /** The record at `key`, or null; from the cache when it is fresh. */
  async get<T>(key: Deno.KvKey): Promise<T | null> {
    const id = JSON.stringify(key);
    const cached = this.#entries.get(id);
    const now = performance.now();
    if (cached !== undefined && cached.expires > now) return cached.value as T | null;
    const generation = this.#generations.get(id);
    const { value } = await this.#kv.get<T>(key);
    if (this.#ttlMs > 0 && this.#generations.get(id) === generation) {
      if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
      this.#entries.set(id, { value, expires: now + this.#ttlMs });
    }
    return value;
  }

  /** Forgets `key`: its next read goes to the store. Call after every commit that changes it. */
  invalidate(key: Deno.KvKey): void {
    const id = JSON.stringify(key);
    this.#entries.delete(id);
    if (this.#generations.size >= MAX_ENTRIES) this.#generations.clear();
    this.#generations.set(id, (this.#generations.get(id) ?? 0) + 1);
  }
}

/** A bound on memory: past it the cache starts afresh (it refills within one time to live). */
const MAX_ENTRIES = 100_000;
