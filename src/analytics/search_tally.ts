/**
 * What search analytics count for one index and one UTC day: searches, those that found nothing, a histogram of their
 * durations, and per query (normalized) its searches, results, empty answers and clicks. Tallies add up, so that an
 * instance's counts of a few seconds merge into the store's, and the store's days into a report; each keeps at most
 * `top` distinct queries, the most searched, so that it stays bounded however varied the queries are.
 */

/** One query's counts in a day. */
export interface QueryCounts {
  /** Searches of the query. */
  count: number;
  /** Results of those searches, summed (`total` of each). */
  results: number;
  /** Those searches that found nothing. */
  noResults: number;
  clicks: number;
  /** The 1-based positions of the clicks, summed. */
  clickPositions: number;
}

/** One day of one index. */
export interface SearchTally {
  searches: number;
  noResultSearches: number;
  /** Searches by duration bucket (see {@link latencyBucket}). */
  latency: Map<number, number>;
  /** By normalized query; searches without a text query (vector, `similarTo`) are counted above only. */
  queries: Map<string, QueryCounts>;
}

/** The format of a stored tally's JSON. */
const FORMAT = 1;

/** The ratio between a latency bucket's bounds: a quantile read from the histogram is within 1% of the true one. */
const BUCKET_RATIO = 1.02;
/** The upper bound of bucket 0, in milliseconds; faster searches fall in it too. */
const FIRST_BUCKET_MS = 0.01;

/** A tally of nothing. */
export function emptyTally(): SearchTally {
  return { searches: 0, noResultSearches: 0, latency: new Map(), queries: new Map() };
}

/** The histogram bucket of a duration: bucket `b` holds durations up to `FIRST_BUCKET_MS × BUCKET_RATIO^b`. */
export function latencyBucket(ms: number): number {
  if (!(ms > FIRST_BUCKET_MS)) return 0;
  return Math.ceil(Math.log(ms / FIRST_BUCKET_MS) / Math.log(BUCKET_RATIO));
}

/** A duration that stands for a bucket: the geometric middle of its bounds, in milliseconds to 3 decimals. */
function bucketMs(bucket: number): number {
  const ms = FIRST_BUCKET_MS * BUCKET_RATIO ** Math.max(0, bucket - 0.5);
  return Math.round(ms * 1000) / 1000;
}

/** The `q` quantile (0 to 1) of a histogram's durations in milliseconds; null when it holds none. */
export function latencyQuantile(latency: ReadonlyMap<number, number>, q: number): number | null {
  const total = [...latency.values()].reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const bucket of [...latency.keys()].sort((a, b) => a - b)) {
    seen += latency.get(bucket)!;
    if (seen >= rank) return bucketMs(bucket);
  }
  return null;
}

/** One search: `query` (normalized, or undefined for one without text), its number of results and its duration. */
export interface SearchEvent {
  query: string | undefined;
  results: number;
  tookMs: number;
}

/**
 * Counts a search into `tally`. Its query gets an entry while the tally has fewer than `top`; past that, only queries
 * it already counts do, and the search still counts in the totals.
 */
export function countSearch(tally: SearchTally, event: SearchEvent, top: number): void {
  const empty = event.results === 0;
  tally.searches++;
  if (empty) tally.noResultSearches++;
  const bucket = latencyBucket(event.tookMs);
  tally.latency.set(bucket, (tally.latency.get(bucket) ?? 0) + 1);
  if (event.query === undefined || event.query === "") return;
  const counts = countsOf(tally, event.query, top);
  if (counts === undefined) return;
  counts.count++;
  counts.results += event.results;
  if (empty) counts.noResults++;
}

/** Counts a click on the hit at 1-based `position` of a search of `query`, within the same bound of `top` queries. */
export function countClick(tally: SearchTally, query: string, position: number, top: number): void {
  const counts = countsOf(tally, query, top);
  if (counts === undefined) return;
  counts.clicks++;
  counts.clickPositions += position;
}

/**
 * Adds the clicks of `clicks` (a tally of clicks alone) to the queries that `into` counts searches of, and returns a
 * tally of the other clicks: a click counts only toward a query searched that day, so that clicks on queries nobody
 * searched take none of the `top` places of a day.
 */
export function addSearchedClicks(into: SearchTally, clicks: SearchTally): SearchTally {
  const unsearched = emptyTally();
  for (const [query, counts] of clicks.queries) {
    const held = into.queries.get(query);
    if (held === undefined || held.count === 0) {
      unsearched.queries.set(query, { ...counts });
      continue;
    }
    held.clicks += counts.clicks;
    held.clickPositions += counts.clickPositions;
  }
  return unsearched;
}

function countsOf(tally: SearchTally, query: string, top: number): QueryCounts | undefined {
  let counts = tally.queries.get(query);
  if (counts === undefined && tally.queries.size < top) {
    counts = { count: 0, results: 0, noResults: 0, clicks: 0, clickPositions: 0 };
    tally.queries.set(query, counts);
  }
  return counts;
}

/**
 * Adds `more` into `into`, then keeps the `top` most searched queries of `into` (on a tie, those it held first: a
 * query that has been counted for longer is not pushed out by a newcomer of the same count).
 */
export function mergeTally(into: SearchTally, more: SearchTally, top: number): SearchTally {
  into.searches += more.searches;
  into.noResultSearches += more.noResultSearches;
  for (const [bucket, count] of more.latency) into.latency.set(bucket, (into.latency.get(bucket) ?? 0) + count);
  for (const [query, counts] of more.queries) {
    const held = into.queries.get(query);
    if (held === undefined) into.queries.set(query, { ...counts });
    else addCounts(held, counts);
  }
  if (into.queries.size > top) {
    // Array.prototype.sort is stable, so ties keep the map's order: the queries held first.
    const kept = [...into.queries].sort(([, a], [, b]) => b.count - a.count).slice(0, top);
    into.queries = new Map(kept);
  }
  return into;
}

/**
 * The tally with each query renamed by `rename` (its normalized form), the counts of queries that become one added
 * together; a query renamed to "" leaves the query lists and stays in the totals.
 */
export function renamedQueries(tally: SearchTally, rename: (query: string) => string): SearchTally {
  const renamed: SearchTally = { ...tally, queries: new Map() };
  for (const [query, counts] of tally.queries) {
    const name = rename(query);
    if (name === "") continue;
    const held = renamed.queries.get(name);
    if (held === undefined) renamed.queries.set(name, { ...counts });
    else addCounts(held, counts);
  }
  return renamed;
}

function addCounts(into: QueryCounts, more: QueryCounts): void {
  into.count += more.count;
  into.results += more.results;
  into.noResults += more.noResults;
  into.clicks += more.clicks;
  into.clickPositions += more.clickPositions;
}

/** A tally as stored: compact JSON. */
export function encodeTally(tally: SearchTally): string {
  return JSON.stringify({
    format: FORMAT,
    searches: tally.searches,
    noResultSearches: tally.noResultSearches,
    latency: [...tally.latency],
    queries: [...tally.queries].map((
      [query, c],
    ) => [query, c.count, c.results, c.noResults, c.clicks, c.clickPositions]),
  });
}

/** A stored tally read back; throws for a format this code does not know. */
export function decodeTally(json: string): SearchTally {
  const stored = JSON.parse(json) as {
    format: number;
    searches: number;
    noResultSearches: number;
    latency: [number, number][];
    queries: [string, number, number, number, number, number][];
  };
  if (stored.format !== FORMAT) throw new Error(`Unknown search analytics format ${stored.format}`);
  return {
    searches: stored.searches,
    noResultSearches: stored.noResultSearches,
    latency: new Map(stored.latency),
    queries: new Map(
      stored.queries.map(([query, count, results, noResults, clicks, clickPositions]) => [
        query,
        { count, results, noResults, clicks, clickPositions },
      ]),
    ),
  };
}
