/**
 * The zod schemas of an index's settings: the `settings` of `updateSettings` (synonyms and pinned results, each list
 * bounded, unknown keys refused) and the `settings` that the Index object always shows.
 */
import { z } from "zod";

/** The most synonym entries an index holds. */
export const MAX_SYNONYMS = 10_000;
/** The most pins an index holds, and the most ids one pin lists. */
export const MAX_PINS = 1_000;
export const MAX_PIN_IDS = 100;
/** The most words or phrases in one synonym entry. */
export const MAX_SYNONYM_WORDS = 100;
/** The longest word or phrase of a synonym, and the longest pin query, in characters. */
export const MAX_PHRASE_LENGTH = 256;
/** The most bytes an index's settings take as JSON. */
export const MAX_SETTINGS_BYTES = 4 * 1024 * 1024;

/** A letter, mark or digit: what makes a word, as the analyzer reads texts. */
const WORD_CHARACTER = /[\p{L}\p{M}\p{N}]/u;

/** A word or a phrase of a synonym entry, or a pin's query: at least one word, well-formed Unicode. */
const phraseSchema = z.string().max(MAX_PHRASE_LENGTH)
  .refine((value) => value.isWellFormed(), { message: "must not contain lone surrogates" })
  .refine((value) => WORD_CHARACTER.test(value), { message: "must hold at least one word" });

/** `{"words": [...]}`: each of the words or phrases finds the others. */
const wordsEntrySchema = z.strictObject({
  words: z.array(phraseSchema).min(2).max(MAX_SYNONYM_WORDS).describe(
    "Words or phrases that each find the others",
  ),
});

/** `{"from": "...", "to": [...]}`: the query word or phrase `from` also finds each of `to`, not the other way. */
const oneWayEntrySchema = z.strictObject({
  from: phraseSchema.describe("The word or phrase of a query"),
  to: z.array(phraseSchema).min(1).max(MAX_SYNONYM_WORDS).describe("What it also finds (phrases allowed)"),
});

/** One synonym entry. */
export const synonymEntrySchema = z.union([wordsEntrySchema, oneWayEntrySchema]).describe(
  'Either {"words": [...]} (each finds the others) or {"from": "...", "to": [...]} (one way)',
);

/** One pin: the documents that come first, in this order, for a query that reads as `query` does. */
export function pinSchema(maxDocIdBytes: number) {
  const id = z.string().min(1).refine((value) => new TextEncoder().encode(value).byteLength <= maxDocIdBytes, {
    message: `must be at most ${maxDocIdBytes} bytes, like every document id`,
  });
  return z.strictObject({
    query: phraseSchema.describe(
      "The query, compared as the index reads queries (folded, stemmed, stop words dropped)",
    ),
    ids: z.array(id).min(1).max(MAX_PIN_IDS).describe("Document ids that come first, in this order"),
  });
}

/** The `settings` of `updateSettings`: each key given replaces that setting, and the others stay as they were. */
export function settingsInputSchema(maxDocIdBytes: number) {
  return z.strictObject({
    synonyms: z.array(synonymEntrySchema).max(MAX_SYNONYMS, {
      message: `must hold at most ${MAX_SYNONYMS} entries, the limit of synonyms per index`,
    }).optional().describe(`Query-time synonyms, at most ${MAX_SYNONYMS}; [] removes them all`),
    pins: z.array(pinSchema(maxDocIdBytes)).max(MAX_PINS, {
      message: `must hold at most ${MAX_PINS} pins, the limit per index`,
    }).optional().describe(`Pinned results, at most ${MAX_PINS}; [] removes them all`),
  }).superRefine((settings, ctx) => {
    const bytes = new TextEncoder().encode(JSON.stringify(settings)).byteLength;
    if (bytes > MAX_SETTINGS_BYTES) {
      ctx.addIssue({
        code: "custom",
        path: [],
        message: `they take ${bytes} bytes as JSON, more than the limit of ${MAX_SETTINGS_BYTES}`,
      });
    }
  }).describe("The settings to change; a key left out keeps its value");
}

/** The settings of an index as the Index object shows them: every setting, `[]` where none is set. */
export const indexSettingsSchema = z.object({
  synonyms: z.array(synonymEntrySchema),
  pins: z.array(z.object({ query: z.string(), ids: z.array(z.string()) })),
}).describe("Query-time settings, changed by updateSettings without a rebuild");

/** An index's settings as stored and shown. */
export type IndexSettings = z.output<typeof indexSettingsSchema>;

/** One synonym entry as stored. */
export type SynonymEntry = z.output<typeof synonymEntrySchema>;

/** The settings of an index that has none. */
export function noSettings(): IndexSettings {
  return { synonyms: [], pins: [] };
}

/** The request of `updateSettings`, given the fields every indexed request has. */
export function updateSettingsSchema<T extends z.ZodRawShape>(indexed: T, maxDocIdBytes: number) {
  return z.object({
    action: z.literal("updateSettings"),
    ...indexed,
    settings: settingsInputSchema(maxDocIdBytes),
  }).describe("Changes an index's query-time settings (synonyms, pins) without a rebuild; answers the Index");
}
