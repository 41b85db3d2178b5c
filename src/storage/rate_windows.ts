/** Per-key request counts in windows of a minute, shared by every instance through the store. */
import { rateWindowKey } from "./kv_keys.ts";

/** A window's count is kept this long after it begins, then expires. */
const WINDOW_KEPT_MS = 2 * 60_000;

/** What one count in the store answered. */
export interface RateCount {
  /** The window's count after this one, across every instance. */
  total: number;
  /** How many of the requests that asked were admitted: the first ones, in order, whose costs fit. */
  admitted: number;
}

/**
 * Adds `counted` requests that were already admitted, and admits the requests that ask (each of its cost, in order)
 * while the window's count stays at or under `limit`, in one atomic step.
 */
export async function countInWindow(
  kv: Deno.Kv,
  keyId: string,
  window: number,
  { counted, asking, limit }: { counted: number; asking: readonly number[]; limit: number },
): Promise<RateCount> {
  const key = rateWindowKey(keyId, window);
  for (;;) {
    const entry = await kv.get<number>(key);
    const before = (entry.value ?? 0) + counted;
    let admitted = 0;
    let total = before;
    while (admitted < asking.length && total + asking[admitted]! <= limit) total += asking[admitted++]!;
    if (total === (entry.value ?? 0)) return { total, admitted };
    const result = await kv.atomic().check(entry).set(key, total, { expireIn: WINDOW_KEPT_MS }).commit();
    if (result.ok) return { total, admitted };
  }
}
