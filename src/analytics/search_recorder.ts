/**
 * Records searches and clicks for search analytics. They are counted in memory per index and UTC day, and merged
 * into the store every flush interval and when the service closes, so that a search pays for a map update only; a
 * process killed without closing loses at most the counts of its last interval. A click counts only toward a query
 * searched in the index that day, by any instance: one whose search is not in the store at the merge waits for the
 * next, and is dropped if it is not there either. Each instance also collects the days past the retention, at start and
 * then hourly.
 */
import { analyzerFor } from "../fulltext/analyzer.ts";
import {
  type AnalyticsDay,
  type AnalyticsIndex,
  collectAnalytics,
  mergeAnalyticsDay,
} from "../storage/analytics_records.ts";
import {
  addSearchedClicks,
  countClick,
  countSearch,
  decodeTally,
  emptyTally,
  encodeTally,
  mergeTally,
  renamedQueries,
  type SearchTally,
} from "./search_tally.ts";
import { daysBefore, utcDay } from "../util/utc_days.ts";

/** How search analytics are kept: `ANALYTICS_TOP`, `ANALYTICS_DAYS` and `ANALYTICS_FLUSH_INTERVAL`. */
export interface AnalyticsSettings {
  /** The most distinct queries a day keeps per index. */
  top: number;
  /** How many UTC days are kept, today included. */
  days: number;
  flushMs: number;
}

/**
 * The index a search or click is counted for: its project, its name, when it was created, and the language its queries
 * are read in.
 */
export interface CountedIndex extends AnalyticsIndex {
  language?: string | undefined;
}

/** The counts of one index and day that are not in the store yet. */
interface PendingDay {
  at: AnalyticsDay;
  language: string | undefined;
  /** Searches, by query as sent. */
  searches: SearchTally;
  /**
   * Clicks on queries not in {@link searches}, by query as sent: kept apart from the searches until a merge finds
   * whether their query was searched.
   */
  clicks: SearchTally;
  /** Clicks (by normalized query) whose query the last merge found no search of: tried once more, then dropped. */
  waitingClicks: SearchTally;
}

/** The longest query kept, in UTF-16 code units; a longer one is cut at a word's end. */
const MAX_QUERY_LENGTH = 256;
/** The most of a query counted before it is normalized, so that long queries hold little memory until the flush. */
const MAX_SENT_LENGTH = 4 * MAX_QUERY_LENGTH;
const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

/** A query as analytics keep it: its folded words, stop words dropped (unless it is nothing else), one space apart. */
export function normalizedQuery(query: string, language: string | undefined): string {
  let normalized = "";
  for (const word of analyzerFor(language).queryWords(query)) {
    const next = normalized === "" ? word : `${normalized} ${word}`;
    if (next.length > MAX_QUERY_LENGTH) break;
    normalized = next;
  }
  return normalized;
}

/** Counts searches and clicks in memory, and merges them into the store. */
export class SearchRecorder {
  readonly #kv: Deno.Kv;
  readonly #settings: AnalyticsSettings;
  /** The counts not yet in the store, by index and day. */
  #pending = new Map<string, PendingDay>();
  /** Today (UTC) and when it ends, so that a search does not format the date. */
  #today = { day: "", until: 0 };
  #flushing: Promise<void> | undefined;
  #flushTimer: ReturnType<typeof setInterval> | undefined;
  #collectTimer: ReturnType<typeof setInterval> | undefined;

  constructor(kv: Deno.Kv, settings: AnalyticsSettings) {
    this.#kv = kv;
    this.#settings = settings;
  }

  /** Starts flushing every interval, and collecting old days now and hourly. */
  start(): void {
    this.#flushTimer = setInterval(() => void this.flush(), this.#settings.flushMs);
    this.#collect();
    this.#collectTimer = setInterval(() => this.#collect(), HOUR_MS);
  }

  /**
   * Counts a search of `query` (undefined for one without text) that found `results` documents in `tookMs`. The query
   * is counted as it was sent, and normalized when the counts are flushed, once per distinct query.
   */
  recordSearch(index: CountedIndex, query: string | undefined, results: number, tookMs: number): void {
    const event = { query: query?.slice(0, MAX_SENT_LENGTH), results, tookMs };
    countSearch(this.#pendingToday(index).searches, event, this.#settings.top);
  }

  /**
   * Counts a click on the hit at 1-based `position` of a search of `query`; it counts only if the query was searched in
   * the index that day (see the module's comment).
   */
  recordClick(index: CountedIndex, query: string, position: number): void {
    const pending = this.#pendingToday(index);
    const sent = query.slice(0, MAX_SENT_LENGTH);
    // A click on a query searched here since the last flush, as sent, counts at once; it needs no place of its own, so
    // that clicks on made-up queries, which fill the places of the others until the merge, cannot push it out.
    const tally = pending.searches.queries.has(sent) ? pending.searches : pending.clicks;
    countClick(tally, sent, position, this.#settings.top);
  }

  #pendingToday(index: CountedIndex): PendingDay {
    const now = Date.now();
    if (now >= this.#today.until) this.#today = { day: utcDay(now), until: (Math.floor(now / DAY_MS) + 1) * DAY_MS };
    const { projectId, indexName, indexCreatedAt } = index;
    return this.#pendingAt({ projectId, indexName, indexCreatedAt, day: this.#today.day }, index.language);
  }

  #pendingAt(at: AnalyticsDay, language: string | undefined): PendingDay {
    const key = [at.day, at.projectId, at.indexName, at.indexCreatedAt].join("\u0000");
    let entry = this.#pending.get(key);
    if (entry === undefined) {
      entry = { at, language, searches: emptyTally(), clicks: emptyTally(), waitingClicks: emptyTally() };
      this.#pending.set(key, entry);
    }
    return entry;
  }

  /** Merges the counts so far into the store; counts that fail to merge are kept for the next flush. */
  flush(): Promise<void> {
    this.#flushing ??= this.#merge().finally(() => this.#flushing = undefined);
    return this.#flushing;
  }

  async #merge(): Promise<void> {
    const pending = this.#pending;
    this.#pending = new Map();
    const top = this.#settings.top;
    for (const { at, language, ...sent } of pending.values()) {
      // Normalizing is idempotent, so counts kept after a failed merge may be normalized again.
      const normalized = (tally: SearchTally) => renamedQueries(tally, (query) => normalizedQuery(query, language));
      const searches = normalized(sent.searches);
      const clicks = normalized(sent.clicks);
      const waitingClicks = sent.waitingClicks;
      let unsearched = emptyTally();
      try {
        await mergeAnalyticsDay(this.#kv, at, (stored) => {
          const day = mergeTally(stored === null ? emptyTally() : decodeTally(stored), searches, top);
          // The waiting clicks have had their second chance; what is left of them is dropped.
          const clickedBefore = addSearchedClicks(day, waitingClicks).queries.size < waitingClicks.queries.size;
          unsearched = addSearchedClicks(day, clicks);
          const clickedNow = unsearched.queries.size < clicks.queries.size;
          // Clicks that all went unsearched change nothing: the day is not written for them.
          return searches.searches === 0 && !clickedBefore && !clickedNow ? null : encodeTally(day);
        });
      } catch (error) {
        console.error(`Search analytics of ${at.day} not stored yet:`, error);
        const kept = this.#pendingAt(at, language);
        kept.searches = mergeTally(searches, kept.searches, top);
        kept.clicks = mergeTally(clicks, kept.clicks, top);
        kept.waitingClicks = mergeTally(waitingClicks, kept.waitingClicks, top);
        continue;
      }
      // The search may have been made on another instance, whose next flush stores it.
      if (unsearched.queries.size > 0) {
        const next = this.#pendingAt(at, language);
        next.waitingClicks = mergeTally(next.waitingClicks, unsearched, top);
      }
    }
  }

  #collect(): void {
    const oldestKept = daysBefore(utcDay(Date.now()), this.#settings.days - 1);
    collectAnalytics(this.#kv, oldestKept).catch((error) =>
      console.error("Old search analytics not collected:", error)
    );
  }

  /** Stops the timers and merges what is counted. */
  async close(): Promise<void> {
    clearInterval(this.#flushTimer);
    clearInterval(this.#collectTimer);
    await this.flush();
    // Counts made while that flush ran, and clicks whose search it did not find, for their second chance.
    if (this.#pending.size > 0) await this.flush();
  }
}
