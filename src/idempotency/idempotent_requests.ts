/**
 * Idempotent writes, after the IETF draft "The Idempotency-Key HTTP Header Field": the first request with a key runs
 * and its answer is kept for 24 hours; a repeat of the same request gets that answer again, a different request with
 * the key gets 422, and a repeat while the first runs gets 409. The claim of a running request lapses unless its
 * instance renews it, so that a request whose instance died can be retried.
 *
 * Answers are stored sealed (AES-GCM) under a key derived from the caller's credential and the idempotency key, since
 * an answer may hold a secret (`createKey`'s), which the store must not hold in the clear.
 */
import { ApiError } from "../api/api_error.ts";
import {
  claimIdempotencyKey,
  type IdempotencyRecord,
  renewIdempotencyClaim,
  settleIdempotencyKey,
} from "../storage/idempotency_records.ts";
import { sha256Hex } from "../util/sha256_hex.ts";

/** A claim lapses this long after it was last renewed. */
const CLAIM_MS = 10_000;
/** A running request renews its claim this often. */
const RENEW_MS = 3_000;
/** The largest answer kept for a replay; a larger one is answered, and a repeat runs again. */
const MAX_ANSWER_BYTES = 60 * 1024;

/** An answer as it is kept and replayed. */
export interface KeptAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What a request with an idempotency key is. */
export interface IdempotentRequest {
  projectId: string;
  /** The `Idempotency-Key` header. */
  key: string;
  /** The credential the caller presented, which seals the answer and tells callers apart. */
  credential: string;
  /** The request, as its action and body in a canonical text. */
  request: string;
}

/** Either the first answer again, or a run that must be settled with its answer. */
export type IdempotentStart = { replay: KeptAnswer } | { settle: (answer: KeptAnswer | null) => Promise<void> };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Whether a header value can be an idempotency key: 1-255 printable ASCII characters. */
export function isIdempotencyKey(value: string): boolean {
  return /^[\x20-\x7e]{1,255}$/.test(value);
}

/** Runs requests with idempotency keys once, across instances. */
export class IdempotentRequests {
  readonly #kv: Deno.Kv;
  readonly #instanceId: string;

  constructor(kv: Deno.Kv, instanceId: string) {
    this.#kv = kv;
    this.#instanceId = instanceId;
  }

  /** Claims the key for this request, or answers with the kept answer; 422 for another request, 409 while it runs. */
  async start(request: IdempotentRequest): Promise<IdempotentStart> {
    const keyHash = sha256Hex(request.key);
    const fingerprint = sha256Hex(`${sha256Hex(request.credential)}\n${request.request}`);
    const owner = `${this.#instanceId}:${crypto.randomUUID()}`;
    const running = { owner, until: Date.now() + CLAIM_MS };
    const held = await claimIdempotencyKey(this.#kv, request.projectId, keyHash, { fingerprint, running });
    if (held !== null) {
      if (held.fingerprint !== fingerprint) {
        throw new ApiError(422, 'This "Idempotency-Key" was used for a different request: use a new key');
      }
      if (held.answer === undefined) {
        throw new ApiError(409, 'A request with this "Idempotency-Key" is still running: retry shortly', {
          headers: { "retry-after": "1" },
        });
      }
      return { replay: await unseal(held.answer, await sealingKey(request)) };
    }
    const renew = setInterval(() => {
      const until = Date.now() + CLAIM_MS;
      renewIdempotencyClaim(this.#kv, request.projectId, keyHash, { owner, until }).catch((error) =>
        console.error("Renewing an idempotency claim failed:", error)
      );
    }, RENEW_MS);
    const settle = async (answer: KeptAnswer | null) => {
      clearInterval(renew);
      const kept = answer !== null && answer.body.length <= MAX_ANSWER_BYTES ? answer : null;
      const answered: IdempotencyRecord | null = kept === null
        ? null
        : { fingerprint, answer: await seal(kept, await sealingKey(request)) };
      await settleIdempotencyKey(this.#kv, request.projectId, keyHash, { owner, answered });
    };
    return { settle };
  }
}

async function sealingKey(request: IdempotentRequest): Promise<CryptoKey> {
  const secret = encoder.encode(`quire idempotent answer\n${request.credential}\n${request.key}`);
  const material = await crypto.subtle.digest("SHA-256", secret);
  return await crypto.subtle.importKey("raw", material, "AES-GCM", false, ["encrypt", "decrypt"]);
}

async function seal(answer: KeptAnswer, key: CryptoKey): Promise<{ iv: Uint8Array; sealed: Uint8Array }> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const plain = encoder.encode(JSON.stringify(answer));
  return { iv, sealed: new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, plain)) };
}

async function unseal(answer: { iv: Uint8Array; sealed: Uint8Array }, key: CryptoKey): Promise<KeptAnswer> {
  const { iv, sealed } = answer;
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: iv as Uint8Array<ArrayBuffer> },
    key,
    sealed as Uint8Array<ArrayBuffer>,
  );
  return JSON.parse(decoder.decode(plain)) as KeptAnswer;
}
