/** A client's view of `POST /manage` for the key tests: replies read whole, and assertions on them. */
import assert from "node:assert/strict";

export type Json = Record<string, unknown>;
export type Reply<T = Json> = { status: number; headers: Headers; body: T; text: string };
export interface KeyView {
  keyId: string;
  key?: string;
  description: string;
  actions: string[];
  indexes: string[];
  expiresAt: string | null;
  requestsPerMinute: number | null;
  createdAt: string;
  lastUsedAt?: string | null;
}
export type Call = <T = Json>(body: Json, headers?: Record<string, string>) => Promise<Reply<T>>;

/** What a deleted or expired key may take to be refused on another instance: METADATA_CACHE_MS (250) and slack. */
export const SETTLE_MS = 400;
export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const DOCS = [
  { id: "p1", text: "a red river lantern", metadata: { kind: "lamp" } },
  { id: "p2", text: "a blue forest lantern", metadata: { kind: "lamp" } },
];

/** `POST /manage` as the `default` project; the body is always read whole. */
export async function post<T = Json>(url: string, body: Json, headers: Record<string, string>): Promise<Reply<T>> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-service-version": "v1", ...headers },
    body: JSON.stringify({ projectId: "default", ...body }),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: kept as text for the messages.
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** Calls `url` with `key` in `x-project-key`. */
export function caller(url: string, key: string): Call {
  return <T = Json>(body: Json, headers: Record<string, string> = {}) =>
    post<T>(url, body, { "x-project-key": key, ...headers });
}

export function expect200<T>(reply: Reply<T>, what: string): T {
  assert.equal(reply.status, 200, `${what}: ${reply.status} ${reply.text.slice(0, 400)}`);
  return reply.body;
}

/** Asserts a JSON error of `status` whose message matches `pattern`; returns the message. */
export function expectError(reply: Reply<unknown>, status: number, what: string, pattern?: RegExp): string {
  assert.equal(reply.status, status, `${what}: expected ${status}, got ${reply.status} ${reply.text.slice(0, 400)}`);
  const error = (reply.body as Json)?.error;
  assert.equal(typeof error, "string", `${what}: a JSON error body: ${reply.text.slice(0, 400)}`);
  if (pattern !== undefined) assert.match(error as string, pattern, what);
  return error as string;
}

/** Retries a 503 with Retry-After (another process held the store's lock, as right after a SIGKILL). */
export async function retrying<T>(send: () => Promise<Reply<T>>, busy = { count: 0 }): Promise<Reply<T>> {
  let reply = await send();
  for (let retry = 0; retry < 5 && reply.status === 503 && reply.headers.has("retry-after"); retry++) {
    busy.count++;
    await sleep(Number(reply.headers.get("retry-after")) * 1000);
    reply = await send();
  }
  return reply;
}

export function pick(value: object, keys: string[]): Json {
  return Object.fromEntries(keys.map((key) => [key, (value as Json)[key]]));
}

export const names = (views: { name: string }[]) => views.map((view) => view.name).sort();
