/** Idempotency keys in Deno KV: claimed while their request runs, then holding its answer until they expire. */
import { idempotencyKey } from "./kv_keys.ts";

/** How long an answered idempotency key is kept. */
export const IDEMPOTENCY_KEPT_MS = 24 * 60 * 60_000;

/** An idempotency key's record. */
export interface IdempotencyRecord {
  /** Which request used the key: a hash of the caller and the request. */
  fingerprint: string;
  /** The instance running it, and until when its claim holds unless renewed; absent once answered. */
  running?: { owner: string; until: number };
  /** The answer, encrypted with a key derived from the caller's credential and the idempotency key. */
  answer?: { iv: Uint8Array; sealed: Uint8Array };
}

/**
 * Claims the key for a run of `record.fingerprint`, or returns the record that holds it: an answer, or a run whose
 * claim has not lapsed. A lapsed claim (its instance died) is taken over.
 */
export async function claimIdempotencyKey(
  kv: Deno.Kv,
  projectId: string,
  keyHash: string,
  record: IdempotencyRecord,
): Promise<IdempotencyRecord | null> {
  const key = idempotencyKey(projectId, keyHash);
  for (;;) {
    const entry = await kv.get<IdempotencyRecord>(key);
    const held = entry.value;
    if (held !== null && (held.running === undefined || held.running.until > Date.now())) return held;
    const result = await kv.atomic().check(entry).set(key, record, { expireIn: IDEMPOTENCY_KEPT_MS }).commit();
    if (result.ok) return null;
  }
}

/** Stores the answer of a run, or with none, gives the key up, as long as `owner` still holds it. */
export async function settleIdempotencyKey(
  kv: Deno.Kv,
  projectId: string,
  keyHash: string,
  { owner, answered }: { owner: string; answered: IdempotencyRecord | null },
): Promise<void> {
  const key = idempotencyKey(projectId, keyHash);
  for (;;) {
    const entry = await kv.get<IdempotencyRecord>(key);
    if (entry.value?.running?.owner !== owner) return;
    const commit = kv.atomic().check(entry);
    if (answered === null) commit.delete(key);
    else commit.set(key, answered, { expireIn: IDEMPOTENCY_KEPT_MS });
    if ((await commit.commit()).ok) return;
  }
}

/** Extends a run's claim to `until`, while `owner` holds it. */
export async function renewIdempotencyClaim(
  kv: Deno.Kv,
  projectId: string,
  keyHash: string,
  { owner, until }: { owner: string; until: number },
): Promise<void> {
  const key = idempotencyKey(projectId, keyHash);
  const entry = await kv.get<IdempotencyRecord>(key);
  if (entry.value?.running?.owner !== owner) return;
  const renewed = { ...entry.value, running: { owner, until } };
  await kv.atomic().check(entry).set(key, renewed, { expireIn: IDEMPOTENCY_KEPT_MS }).commit();
}
