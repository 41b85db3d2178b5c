/**
 * The settings of indexes as searches use them: each version read from the store once per instance, its synonyms
 * compiled for the index's language and its pins keyed by their query as the index reads it, so that a search looks
 * them up instead of reading or compiling them. A version never changes (a change writes a new one), so a version's
 * compiled form stays right for as long as it is kept.
 */
import { type Analyzer, analyzerFor } from "../fulltext/analyzer.ts";
import { DEFAULT_LANGUAGE } from "../fulltext/languages.ts";
import { compileSynonyms, queryTerms, type SynonymMap } from "../fulltext/synonyms.ts";
import { type IndexSettings, noSettings } from "../api/settings_schemas.ts";
import type { SearchSettings } from "../search/settings_search.ts";
import { type IndexRecord, readIndexRecord } from "../storage/index_records.ts";
import { readSettingsVersion } from "../storage/settings_records.ts";

/** The most synonym entries and pins kept compiled across indexes, before the least recently used go. */
const MAX_KEPT_ENTRIES = 200_000;
/** Tries at reading an index's settings while changes replace the version its record named. */
const READ_TRIES = 4;

/** One version of an index's settings, ready for searches: compiled at the first search, not to show them. */
export class LoadedSettings {
  /** The settings as stored and shown. */
  readonly settings: IndexSettings;
  readonly #analyzer: Analyzer;
  #synonyms: SynonymMap | undefined | null = null;
  #pins: Map<string, readonly string[]> | undefined;

  constructor(settings: IndexSettings, analyzer: Analyzer) {
    this.settings = settings;
    this.#analyzer = analyzer;
  }

  /** The compiled synonyms; undefined when there are none. */
  get synonyms(): SynonymMap | undefined {
    if (this.#synonyms === null) this.#synonyms = compileSynonyms(this.settings.synonyms, this.#analyzer);
    return this.#synonyms;
  }

  /** What the settings add to a search of `query`: the synonyms, and the ids pinned for it. */
  forQuery(query: string): SearchSettings {
    return { synonyms: this.synonyms, pinned: query === "" ? undefined : this.pinnedFor(query) };
  }

  /** The ids pinned for `query`, in order; undefined when no pin's query reads as it does. */
  pinnedFor(query: string): readonly string[] | undefined {
    if (this.settings.pins.length === 0) return undefined;
    if (this.#pins === undefined) {
      this.#pins = new Map();
      // `updateSettings` refuses two pins of one query; of any that predate that, the first wins.
      for (const { query, ids } of this.settings.pins) {
        const key = pinKey(this.#analyzer, query);
        if (!this.#pins.has(key)) this.#pins.set(key, ids);
      }
    }
    return this.#pins.get(pinKey(this.#analyzer, query));
  }

  /** How many entries it holds: what it weighs against {@link MAX_KEPT_ENTRIES}. */
  get entries(): number {
    return this.settings.synonyms.length + this.settings.pins.length + 1;
  }
}

/** A query as pins compare it: its terms as the index reads a query, joined by spaces. */
export function pinKey(analyzer: Analyzer, query: string): string {
  return queryTerms(analyzer, query).join(" ");
}

/** The settings of the indexes this instance searches, by version. */
export class IndexSettingsCache {
  readonly #kv: Deno.Kv;
  /** By index id, version id and language, the least recently used first. */
  readonly #kept = new Map<string, LoadedSettings>();
  #keptEntries = 0;
  readonly #none = new Map<string, LoadedSettings>();

  constructor(kv: Deno.Kv) {
    this.#kv = kv;
  }

  /**
   * The settings that `record` names. When a newer version replaced that one meanwhile (its chunks are gone), the
   * record is read again and its current settings are answered.
   */
  async of(record: IndexRecord): Promise<LoadedSettings> {
    for (let tries = 1;; tries++) {
      const language = record.language ?? DEFAULT_LANGUAGE;
      const version = record.settings;
      if (version === undefined) return this.#empty(language);
      const key = `${record.id}/${version.id}/${language}`;
      const kept = this.#kept.get(key);
      if (kept !== undefined) {
        this.#kept.delete(key);
        this.#kept.set(key, kept);
        return kept;
      }
      const stored = await readSettingsVersion(this.#kv, record.id, version);
      if (stored !== null) return this.#keep(key, new LoadedSettings(stored as IndexSettings, analyzerFor(language)));
      const latest = await readIndexRecord(this.#kv, record.projectId, record.name);
      if (latest === null) return this.#empty(language);
      if (tries >= READ_TRIES || (latest.id === record.id && latest.settings?.id === version.id)) {
        throw new Error(`The settings of index "${record.name}" (version ${version.id}) are missing from the store`);
      }
      record = latest;
    }
  }

  #keep(key: string, loaded: LoadedSettings): LoadedSettings {
    this.#kept.set(key, loaded);
    this.#keptEntries += loaded.entries;
    for (const [oldest, settings] of this.#kept) {
      if (this.#keptEntries <= MAX_KEPT_ENTRIES || oldest === key) break;
      this.#kept.delete(oldest);
      this.#keptEntries -= settings.entries;
    }
    return loaded;
  }

  #empty(language: string): LoadedSettings {
    let none = this.#none.get(language);
    if (none === undefined) this.#none.set(language, none = new LoadedSettings(noSettings(), analyzerFor(language)));
    return none;
  }
}
