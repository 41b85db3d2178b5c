/**
 * An index's settings as plain TypeScript types: synonyms, pins, and the body of `updateSettings`. `api_types.ts` joins
 * them into the API's unions; `tests/unit/api_types_test.ts` checks them against the zod schemas.
 */

/** Words or phrases that each find the others: `{"words": ["sofa", "couch", "settee"]}`. */
export interface SynonymWords {
  /** Two or more words or phrases. */
  words: string[];
}

/** A one-way synonym: a query holding `from` also finds each of `to` (`{"from": "nyc", "to": ["new york"]}`). */
export interface OneWaySynonym {
  /** The word or phrase of a query. */
  from: string;
  /** What it also finds; phrases allowed. */
  to: string[];
}

/** One synonym entry. */
export type SynonymEntry = SynonymWords | OneWaySynonym;

/** A pin: for a query that reads as `query` does, the documents `ids` come first, in this order. */
export interface Pin {
  /** The query, compared as the index reads queries (folded, stemmed, stop words dropped). */
  query: string;
  /** Document ids; a missing or filtered-out one is skipped. */
  ids: string[];
}

/** An index's query-time settings as the Index object shows them: every setting, `[]` where none is set. */
export interface IndexSettings {
  /** Query-time synonyms, in full-text search and the full-text half of hybrid. */
  synonyms: SynonymEntry[];
  /** Pinned results. */
  pins: Pin[];
}

/** The body of `updateSettings`: each setting given replaces its value; those left out keep theirs. */
export interface UpdateSettingsRequest {
  /** The action. */
  action: "updateSettings";
  /** The project. */
  projectId: string;
  /** The index. */
  indexName: string;
  /** The settings to change. */
  settings: IndexSettingsInput;
}

/** The settings that `updateSettings` changes: each one given replaces its value; those left out keep theirs. */
export interface IndexSettingsInput {
  /** At most 10,000 entries; `[]` removes them all. */
  synonyms?: SynonymEntry[] | undefined;
  /** At most 1,000 pins; `[]` removes them all. */
  pins?: Pin[] | undefined;
}
