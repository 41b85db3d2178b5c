/**
 * Records searches and clicks for search analytics. They are counted in memory per index and UTC day, and merged
 * into the store every flush interval and when the service closes, so that a search pays for a map update only; a
 * process killed without closing loses at most the counts of its last interval. Each instance also collects the days
 * past the retention, at start and then hourly.
 */
import { analyzerFor } from "../fulltext/analyzer.ts";
import { type AnalyticsDay, collectAnalytics, mergeAnalyticsDay } from "../storage/analytics_records.ts";
import {
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

/** The index a search or click is counted for: its project, its name, and the language its queries are read in. */
export interface CountedIndex {
  projectId: string;
  indexName: string;
  language?: string | undefined;
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
  #pending = new Map<string, { at: AnalyticsDay; language: string | undefined; tally: SearchTally }>();
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
    countSearch(this.#tallyOf(index), { query: query?.slice(0, MAX_SENT_LENGTH), results, tookMs }, this.#settings.top);
  }

  /** Counts a click on the hit at 1-based `position` of a search of `query`. */
  recordClick(index: CountedIndex, query: string, position: number): void {
    countClick(this.#tallyOf(index), query.slice(0, MAX_SENT_LENGTH), position, this.#settings.top);
  }

  #tallyOf(index: CountedIndex): SearchTally {
    const now = Date.now();
    if (now >= this.#today.until) this.#today = { day: utcDay(now), until: (Math.floor(now / DAY_MS) + 1) * DAY_MS };
    const key = `${this.#today.day}\u0000${index.projectId}\u0000${index.indexName}`;
    let entry = this.#pending.get(key);
    if (entry === undefined) {
      const at = { projectId: index.projectId, indexName: index.indexName, day: this.#today.day };
      this.#pending.set(key, entry = { at, language: index.language, tally: emptyTally() });
    }
    return entry.tally;
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
    for (const [key, { at, language, tally: sent }] of pending) {
      // Normalizing is idempotent, so counts kept after a failed merge may be normalized again.
      const tally = renamedQueries(sent, (query) => normalizedQuery(query, language));
      try {
        await mergeAnalyticsDay(
          this.#kv,
          at,
          (stored) => encodeTally(mergeTally(stored === null ? emptyTally() : decodeTally(stored), tally, top)),
        );
      } catch (error) {
        console.error(`Search analytics of ${at.day} not stored yet:`, error);
        const kept = this.#pending.get(key);
        this.#pending.set(key, {
          at,
          language,
          tally: kept === undefined ? tally : mergeTally(tally, kept.tally, top),
        });
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
    // Counts made while that flush ran.
    if (this.#pending.size > 0) await this.flush();
  }
}
