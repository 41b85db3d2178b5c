/** Whether the store answers, for the readiness probe. */
import { readinessKey } from "./kv_keys.ts";

/** Reads one key; resolves when the store answers and rejects when it fails. */
export async function probeStore(kv: Deno.Kv): Promise<void> {
  await kv.get(readinessKey());
}
