/** Refreshes index snapshots in the background after writes, at most one at a time per index. */
import type { BackgroundTasks } from "../concurrency/background_tasks.ts";
import type { IndexRecord } from "./index_records.ts";
import { indexKey } from "./kv_keys.ts";
import { writeSnapshot } from "./snapshot_store.ts";

/** Attempts per refresh before giving up until the next write; each attempt fails only if the index changed. */
const MAX_ATTEMPTS = 5;

/** Coalesces snapshot requests: writes during a refresh cause exactly one more refresh afterwards. */
export class SnapshotScheduler {
  readonly #kv: Deno.Kv;
  readonly #tasks: BackgroundTasks;
  readonly #states = new Map<string, "running" | "dirty">();

  constructor(kv: Deno.Kv, tasks: BackgroundTasks) {
    this.#kv = kv;
    this.#tasks = tasks;
  }

  /** Asks for a fresh snapshot of an index. */
  schedule(projectId: string, indexName: string): void {
    const key = JSON.stringify([projectId, indexName]);
    if (this.#states.has(key)) {
      this.#states.set(key, "dirty");
      return;
    }
    this.#states.set(key, "running");
    this.#tasks.run(`snapshot ${key}`, async () => {
      try {
        do {
          this.#states.set(key, "running");
          await this.#refresh(projectId, indexName);
        } while (this.#states.get(key) === "dirty");
      } finally {
        this.#states.delete(key);
      }
    });
  }

  async #refresh(projectId: string, indexName: string): Promise<void> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const entry = await this.#kv.get<IndexRecord>(indexKey(projectId, indexName));
      if (entry.value === null) return;
      if (entry.value.pending === undefined && await writeSnapshot(this.#kv, entry as Deno.KvEntry<IndexRecord>)) {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 10 * (attempt + 1)));
    }
  }
}
