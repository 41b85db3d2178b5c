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
const HOUR_MS = 60 * 60 * 1000;

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
  #pending = new Map<string, { at: AnalyticsDay; tally: SearchTally }>();
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

  /** Counts a search of `query` (undefined for one without text) that found `results` documents in `tookMs`. */
  recordSearch(index: CountedIndex, query: string | undefined, results: number, tookMs: number): void {
    const normalized = query === undefined ? undefined : normalizedQuery(query, index.language);
    countSearch(this.#tallyOf(index), { query: normalized, results, tookMs }, this.#settings.top);
  }

  /** Counts a click on the hit at 1-based `position` of a search of `query`. */
  recordClick(index: CountedIndex, query: string, position: number): void {
    const normalized = normalizedQuery(query, index.language);
    if (normalized !== "") countClick(this.#tallyOf(index), normalized, position, this.#settings.top);
  }

  #tallyOf(index: CountedIndex): SearchTally {
    const at = { projectId: index.projectId, indexName: index.indexName, day: utcDay(Date.now()) };
    const key = JSON.stringify([at.projectId, at.indexName, at.day]);
    let entry = this.#pending.get(key);
    if (entry === undefined) this.#pending.set(key, entry = { at, tally: emptyTally() });
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
    for (const [key, { at, tally }] of pending) {
      try {
        await mergeAnalyticsDay(
          this.#kv,
          at,
          (stored) => encodeTally(mergeTally(stored === null ? emptyTally() : decodeTally(stored), tally, top)),
        );
      } catch (error) {
        console.error(`Search analytics of ${at.day} not stored yet:`, error);
        const kept = this.#pending.get(key);
        this.#pending.set(key, { at, tally: kept === undefined ? tally : mergeTally(tally, kept.tally, top) });
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
