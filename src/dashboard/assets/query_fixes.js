/**
 * The fixes for a query that found nothing, written to the index's settings with `updateSettings`: a synonym (the
 * query also finds other words) or a pin (documents that come first for the query).
 */
import { askForList } from "./list_dialog.js";

/** The synonyms with one more entry: `query` also finds each of `words` (one way). */
export function withSynonym(synonyms, query, words) {
  return [...synonyms, { from: query, to: words }];
}

/** The pins with `ids` first for `query`: its pin replaced in place, or a new one at the end. */
export function withPin(pins, query, ids) {
  const at = pins.findIndex((pin) => sameQuery(pin.query, query));
  return at === -1 ? [...pins, { query, ids }] : pins.with(at, { query, ids });
}

/**
 * What `settings` already do for `query` (as analytics show it: lower-case words): the words its synonyms add and the
 * ids pinned for it, as text; "" when nothing.
 */
export function fixesNote(settings, query) {
  const words = settings.synonyms.flatMap((entry) => {
    if ("words" in entry) {
      return entry.words.some((word) => sameQuery(word, query))
        ? entry.words.filter((word) => !sameQuery(word, query))
        : [];
    }
    return sameQuery(entry.from, query) ? entry.to : [];
  });
  const pin = settings.pins.find((candidate) => sameQuery(candidate.query, query));
  return [
    words.length > 0 ? `Synonyms: ${words.join(", ")}` : "",
    pin === undefined ? "" : `Pinned: ${pin.ids.join(", ")}`,
  ].filter((part) => part !== "").join("; ");
}

// Settings are written as people type them ("Sofa"); the server folds them as it folds queries, which this
// approximates well enough to tell which entries concern a query.
function sameQuery(written, query) {
  return written.trim().toLowerCase().split(/\s+/).join(" ") === query;
}

/**
 * Asks for the words that `query` should also find and adds them as a one-way synonym of index `name`; resolves to
 * the index's settings after, or null when the person cancels.
 */
export async function addSynonym(app, name, query) {
  const words = await askForList(`Add a synonym for "${query}"`, {
    label: "Words it should also find",
    hint: 'Separated by commas, such as "couch, settee"; phrases are allowed. One way: they do not find the query.',
    submitLabel: "Add synonym",
  });
  if (words === null) return null;
  return await changeSettings(app, name, (settings) => ({ synonyms: withSynonym(settings.synonyms, query, words) }));
}

/**
 * Asks for the ids of the documents that come first for `query` (starting at those of its pin, if any) and pins them
 * in index `name`; resolves to the index's settings after, or null when the person cancels.
 */
export async function pinResults(app, name, query) {
  const { data: index } = await app.call("getIndex", { indexName: name });
  const pinned = index.settings.pins.find((pin) => sameQuery(pin.query, query));
  const ids = await askForList(`Pin results for "${query}"`, {
    label: "Document ids",
    hint: "Separated by commas, in the order they come first",
    value: pinned?.ids.join(", ") ?? "",
    submitLabel: "Pin results",
  });
  if (ids === null) return null;
  return await changeSettings(app, name, (settings) => ({ pins: withPin(settings.pins, query, ids) }));
}

async function changeSettings(app, name, change) {
  // Read just before writing: the Settings view, or someone else, may have changed them while the dialog was open.
  const { data: index } = await app.call("getIndex", { indexName: name });
  const { data: updated } = await app.call("updateSettings", { indexName: name, settings: change(index.settings) });
  return updated.settings;
}
