/**
 * `deno task bench:rate`: how far N server processes over one KV file overshoot a key's `requestsPerMinute`. Each
 * instance admits a request at once while its own uncounted admissions stay within 5% of the limit and its view of the
 * window's count under half of it; past that it waits for an atomic count in the store (src/keys/rate_limiter.ts).
 * Four processes start once (`LOG_REQUESTS=false`); N instances are the first N of them, the others idle. Every case
 * uses a key of its own, so it starts on a fresh window that no instance has seen: every view is stale, as at the start
 * of a UTC minute. The run waits for a fresh minute first, and for the next one whenever a case might not end before
 * the minute does; a case never spans two windows.
 *
 * - burst: `--clients` concurrent clients per instance send `getIndex` until every instance has answered 429 for a
 *   second (or the minute nearly ends); the 200s are counted per instance.
 * - multi: the same with `multiSearch` requests of 5 full-text queries (a cost of 5), counting admitted queries.
 * - stale, stale-multi (N ≥ 2): the worst order a user can pick: a burst on the first instance alone until it answers
 *   429, then a burst on the others, which have not seen the key's count this minute.
 * - steady: `--steady-rate` (2) times the limit per minute, round-robin over the instances, for `--steady-seconds`
 *   (20), every instance count and limit at once, one stream each. 20 s at 2× sends two thirds of the limit, so it
 *   shows only that nothing is refused early; `--steady-seconds 40` runs past the limit.
 *
 * Each line gives the worst of `--repeats` runs: the admitted requests (queries for multi), per instance, and the
 * admitted share of the limit; the store's own count of the window is read back to check the tally. Answers other than
 * 200 and the key's 429 (503 when the store is busy with another process, requests unanswered in 5 s) are listed.
 *
 *   deno task bench:rate                                   # N = 1, 2, 4; L = 600, 6000; 3 repeats (about 5 minutes)
 *   deno task bench:rate --shapes steady --steady-seconds 40 --repeats 1
 */
import { parseArgs } from "node:util";
import { serverEnvironment, type ServerProcess, startServerProcess } from "../../tests/_server_process.ts";
import { rateWindowKey } from "../../src/storage/kv_keys.ts";
import { line, ok } from "./_bench_helpers.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    repeats: { type: "string", default: "3" },
    instances: { type: "string", default: "1,2,4" },
    limits: { type: "string", default: "600,6000" },
    clients: { type: "string", default: "8" },
    shapes: { type: "string", default: "burst,multi,stale,stale-multi,steady" },
    "steady-seconds": { type: "string", default: "20" },
    "steady-rate": { type: "string", default: "2" },
  },
});
const REPEATS = Number(values.repeats);
const COUNTS = values.instances.split(",").map(Number);
const LIMITS = values.limits.split(",").map(Number);
const CLIENTS = Number(values.clients);
const SHAPES = new Set(values.shapes.split(","));
const STEADY_SECONDS = Number(values["steady-seconds"]);
/** The steady shape's rate, in multiples of the limit per minute. */
const STEADY_RATE = Number(values["steady-rate"]);
const MULTI_QUERIES = 5;
/** A burst ends once every instance has answered only 429 for this long. */
const HOLD_MS = 1_000;
/** Nothing is sent in the last this-many milliseconds of a minute, so that a case never spans two windows. */
const MINUTE_MARGIN_MS = 2_000;
const WINDOW_MS = 60_000;
/** A request unanswered this long is given up (and counted as such), so that no client waits without end. */
const REQUEST_TIMEOUT_MS = 5_000;
const INDEX = "small";

type Shape = "burst" | "multi" | "stale" | "stale-multi" | "steady";
const BURSTS = ["burst", "multi", "stale", "stale-multi"] as const;

/** One instance's answers in one case. */
interface Tally {
  /** 200s, in requests; queries for multi. */
  admitted: number;
  /** 429s of the key's rate. */
  refused: number;
  /** Anything else, by status. */
  other: Map<string, number>;
  lastAdmitted: number;
  firstRefused: number | undefined;
}

/** What one run of one case measured. */
interface Outcome {
  admitted: number;
  perInstance: number[];
  /** The store's count of the key's window, read back after the case. */
  stored: number;
  /** Answers other than 200 and the key's 429, by status. */
  other: Map<string, number>;
  /** Whether the burst was cut by the minute's end instead of ending on 429s. */
  cut: boolean;
}

const env: Record<string, string> = { ...await serverEnvironment(), LOG_REQUESTS: "false" };
const maxInstances = Math.max(...COUNTS);
const first = await startServerProcess(env);
const servers: ServerProcess[] = [first];
for (let i = 1; i < maxInstances; i++) servers.push(await startServerProcess(env, first.key));
const kv = await Deno.openKv(env.DENO_KV_PATH!);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const msLeftInMinute = () => WINDOW_MS - (Date.now() % WINDOW_MS);

async function waitForFreshMinute(): Promise<void> {
  await sleep(msLeftInMinute() + 20);
}

/** Waits for the next minute unless `needMs` are left in this one. */
async function ensureTime(needMs: number): Promise<void> {
  if (msLeftInMinute() < needMs + MINUTE_MARGIN_MS) await waitForFreshMinute();
}

/** A fresh rate-limited key on the small index. */
async function createKey(limit: number): Promise<{ keyId: string; key: string }> {
  return await ok(first, {
    action: "createKey",
    actions: ["search", "getIndex"],
    indexes: [INDEX],
    requestsPerMinute: limit,
  });
}

function newTally(): Tally {
  return { admitted: 0, refused: 0, other: new Map(), lastAdmitted: 0, firstRefused: undefined };
}

const getIndexBody = JSON.stringify({ action: "getIndex", projectId: "default", indexName: INDEX });
const multiBody = JSON.stringify({
  action: "multiSearch",
  projectId: "default",
  queries: Array.from({ length: MULTI_QUERIES }, (_, i) => ({
    indexName: INDEX,
    query: ["rate", "limit", "window", "store", "count"][i],
    mode: "fulltext",
    limit: 3,
  })),
});

/** Sends one request with `key` to `server` and tallies its answer; one unanswered in time counts as "no answer". */
async function send(server: ServerProcess, key: string, multi: boolean, tally: Tally): Promise<void> {
  let status: string | undefined;
  try {
    const response = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json", "x-service-version": "v1", "x-project-key": key },
      body: multi ? multiBody : getIndexBody,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    if (response.status === 200) {
      // Admitted by the rate limit, whatever became of its queries.
      tally.admitted += multi ? MULTI_QUERIES : 1;
      tally.lastAdmitted = Date.now();
      const results = multi ? (JSON.parse(text) as { results: { status?: number }[] }).results : [];
      const failed = results.find((result) => result.status !== undefined);
      if (failed !== undefined) status = `200 with a query's ${failed.status}`;
    } else if (response.status === 429 && text.includes("passed its rate")) {
      tally.refused++;
      tally.firstRefused ??= Date.now();
    } else {
      status = String(response.status);
    }
  } catch (error) {
    status = error instanceof DOMException && error.name === "TimeoutError"
      ? `no answer in ${REQUEST_TIMEOUT_MS / 1000} s`
      : error instanceof Error
      ? error.name
      : "error";
  }
  if (status !== undefined) tally.other.set(status, (tally.other.get(status) ?? 0) + 1);
}

/**
 * `CLIENTS` concurrent clients on each of `targets` until every one of them has answered 429 and nothing else for
 * {@link HOLD_MS}, or the minute nearly ends, or a bound on requests is reached. Answers whether the minute cut it.
 */
async function burst(
  targets: number[],
  key: string,
  limit: number,
  multi: boolean,
  tallies: Tally[],
): Promise<boolean> {
  const deadline = Date.now() + msLeftInMinute() - MINUTE_MARGIN_MS;
  const maxRequests = 3 * limit + 30_000;
  let sent = 0;
  const settled = () => {
    const now = Date.now();
    return targets.every((t) => {
      const tally = tallies[t]!;
      return tally.firstRefused !== undefined && now - Math.max(tally.lastAdmitted, tally.firstRefused) >= HOLD_MS;
    });
  };
  const client = async (t: number) => {
    while (sent < maxRequests && Date.now() < deadline && !settled()) {
      sent++;
      await send(servers[t]!, key, multi, tallies[t]!);
    }
  };
  await Promise.all(targets.flatMap((t) => Array.from({ length: CLIENTS }, () => client(t))));
  return !settled();
}

/** Reads the store's count of `keyId` in the window of `at`, after the instances' last counts (within 100 ms). */
async function storedCount(keyId: string, at: number): Promise<number> {
  await sleep(300);
  return (await kv.get<number>(rateWindowKey(keyId, Math.floor(at / WINDOW_MS)))).value ?? 0;
}

/** The statuses of `tallies` added up. */
function addedUp(tallies: { other: Map<string, number> }[]): Map<string, number> {
  const other = new Map<string, number>();
  for (const tally of tallies) {
    for (const [status, count] of tally.other) other.set(status, (other.get(status) ?? 0) + count);
  }
  return other;
}

function outcome(tallies: Tally[], n: number, stored: number, cut: boolean): Outcome {
  const perInstance = tallies.slice(0, n).map((tally) => tally.admitted);
  const admitted = perInstance.reduce((sum, x) => sum + x, 0);
  return { admitted, perInstance, stored, other: addedUp(tallies), cut };
}

/** One run of a burst shape with `n` instances and limit `limit`. */
async function runBurst(shape: typeof BURSTS[number], n: number, limit: number): Promise<Outcome> {
  const { keyId, key } = await createKey(limit);
  await ensureTime(limit >= 6_000 ? 15_000 : 6_000);
  const started = Date.now();
  const tallies = Array.from({ length: n }, newTally);
  const all = Array.from({ length: n }, (_, i) => i);
  const multi = shape.endsWith("multi");
  let cut: boolean;
  if (shape.startsWith("stale")) {
    cut = await burst([0], key, limit, multi, tallies);
    if (!cut) cut = await burst(all.slice(1), key, limit, multi, tallies);
  } else {
    cut = await burst(all, key, limit, multi, tallies);
  }
  return outcome(tallies, n, await storedCount(keyId, started), cut);
}

/** One run of the steady shape for every instance count and limit at once, keyed by `${n}/${limit}`. */
async function runSteady(): Promise<Map<string, Outcome>> {
  const cases = COUNTS.flatMap((n) => LIMITS.map((limit) => ({ n, limit })));
  const keys = await Promise.all(cases.map(({ limit }) => createKey(limit)));
  await ensureTime(STEADY_SECONDS * 1_000 + 2_000);
  const started = Date.now();
  const tallies = cases.map(({ n }) => Array.from({ length: n }, newTally));
  const streams = cases.map(async ({ n, limit }, c) => {
    const perSecond = STEADY_RATE * limit / 60;
    const total = Math.round(perSecond * STEADY_SECONDS);
    const inFlight = new Set<Promise<void>>();
    for (let k = 0; k < total && Date.now() - started < (STEADY_SECONDS + 5) * 1_000; k++) {
      await sleep(started + k * 1_000 / perSecond - Date.now());
      const request = send(servers[k % n]!, keys[c]!.key, false, tallies[c]![k % n]!);
      inFlight.add(request);
      request.finally(() => inFlight.delete(request));
      if (inFlight.size >= 256) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  });
  await Promise.all(streams);
  const results = new Map<string, Outcome>();
  for (const [c, { n, limit }] of cases.entries()) {
    const stored = await storedCount(keys[c]!.keyId, started);
    results.set(`${n}/${limit}`, outcome(tallies[c]!, n, stored, false));
  }
  return results;
}

const percent = (admitted: number, limit: number) => {
  const over = (admitted / limit - 1) * 100;
  return `${(admitted / limit * 100).toFixed(1)}% of L (${over >= 0 ? "+" : ""}${over.toFixed(1)}%)`;
};

console.log(
  `quire rate-overshoot benchmark: ${Deno.build.target}, ${navigator.hardwareConcurrency} cores; ${CLIENTS} clients ` +
    `per instance, ${REPEATS} repeat(s), worst shown`,
);
const results = new Map<string, Outcome[]>();
const record = (id: string, result: Outcome) => results.set(id, [...results.get(id) ?? [], result]);
try {
  await ok(first, {
    action: "createIndex",
    indexName: INDEX,
    docs: ["rate limits per key", "a window of a minute", "the store counts"].map((text, i) => ({ id: `d${i}`, text })),
  });
  await waitForFreshMinute();
  const runStart = Date.now();
  for (let r = 0; r < REPEATS; r++) {
    if (SHAPES.has("steady")) {
      for (const [id, result] of await runSteady()) record(`${id}/steady`, result);
    }
    for (const n of COUNTS) {
      for (const limit of LIMITS) {
        for (const shape of BURSTS) {
          if (!SHAPES.has(shape) || (shape.startsWith("stale") && n < 2)) continue;
          record(`${n}/${limit}/${shape}`, await runBurst(shape, n, limit));
        }
      }
    }
  }
  const shapeNames: Record<Shape, string> = {
    burst: "burst getIndex",
    multi: `burst multiSearch×${MULTI_QUERIES}`,
    stale: "fill 1, then burst rest",
    "stale-multi": `the same, multiSearch×${MULTI_QUERIES}`,
    steady: `steady ${STEADY_RATE}×L/min ${STEADY_SECONDS}s`,
  };
  for (const n of COUNTS) {
    for (const limit of LIMITS) {
      for (const shape of [...BURSTS, "steady"] as const) {
        const runs = results.get(`${n}/${limit}/${shape}`);
        if (runs === undefined) continue;
        const worst = runs.reduce((a, b) => b.admitted > a.admitted ? b : a);
        const unit = shape.endsWith("multi") ? "queries" : "requests";
        const other = addedUp(runs);
        const notes = [
          runs.every((run) => run.stored === run.admitted)
            ? "store agrees"
            : `store counts ${runs.map((run) => run.stored).join(", ")}`,
          ...(other.size === 0 ? [] : [`other answers in all runs ${JSON.stringify(Object.fromEntries(other))}`]),
          ...(runs.some((run) => run.cut) ? ["a run was cut by the minute's end"] : []),
        ];
        line(
          `N=${n} L=${limit}`,
          `${shapeNames[shape].padEnd(26)} admitted ${worst.admitted} ${unit} (${worst.perInstance.join("+")}), ` +
            `${percent(worst.admitted, limit)}; runs ${runs.map((run) => run.admitted).join(", ")}; ${
              notes.join("; ")
            }`,
        );
      }
    }
  }
  console.log(`measured in ${((Date.now() - runStart) / 1000).toFixed(0)} s after the first fresh minute`);
} finally {
  kv.close();
  for (const server of servers) await server.stop();
}
