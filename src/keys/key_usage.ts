/** Records when each key was last used, for `listKeys`: at most one write per key per minute per instance. */
import type { BackgroundTasks } from "../concurrency/background_tasks.ts";
import { writeApiKeyUse } from "../storage/api_key_records.ts";

/** How stale `lastUsedAt` may be. */
const USE_PRECISION_MS = 60_000;
/** Keys remembered at most; past it the memory starts afresh (and each key is written once more). */
const MAX_KEYS = 10_000;

/** Writes keys' last use in the background. */
export class KeyUsage {
  readonly #kv: Deno.Kv;
  readonly #background: BackgroundTasks;
  readonly #written = new Map<string, number>();

  constructor(kv: Deno.Kv, background: BackgroundTasks) {
    this.#kv = kv;
    this.#background = background;
  }

  /** Notes a use of key `keyId` of `projectId` now. */
  record(projectId: string, keyId: string): void {
    const now = Date.now();
    const id = `${projectId}\n${keyId}`;
    const last = this.#written.get(id);
    if (last !== undefined && now - last < USE_PRECISION_MS) return;
    if (this.#written.size >= MAX_KEYS) this.#written.clear();
    this.#written.set(id, now);
    const at = new Date(now).toISOString();
    this.#background.run("record key use", () => writeApiKeyUse(this.#kv, projectId, keyId, at));
  }
}
