/**
 * Search analytics in the store: per index name and UTC day (`YYYY-MM-DD`), a tally as JSON, cut into chunks under a
 * version id that the day's head names. An instance adds its counts by reading the day, merging, and writing a new
 * version that it commits only if the head is still the one it read, so that the counts of several instances add up;
 * the version it replaced is deleted after. Days older than the retention are collected.
 */
import { analyticsChunkKey, analyticsChunksPrefix, analyticsDayKey, analyticsPrefix } from "./kv_keys.ts";
import { deleteTrees, readChunks, writeChunks } from "./kv_batches.ts";
import { whileBusy } from "./store_busy.ts";
import { isAbandoned, newTimedId } from "./timed_id.ts";

/** Where a day's analytics are: the index's project and name, and the day. */
export interface AnalyticsDay {
  projectId: string;
  indexName: string;
  day: string;
}

/** A day's head: the version of its tally, and how many chunks hold it. */
interface DayHead {
  version: string;
  chunks: number;
}

/** How often a merge is tried again after another instance's merge of the same day committed first. */
const MERGE_ATTEMPTS = 20;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Replaces a day's tally with `merge(stored)`, where `stored` is its JSON or null when the day has none yet; `merge`
 * runs again on the newer tally when another instance changed the day meanwhile.
 */
export async function mergeAnalyticsDay(
  kv: Deno.Kv,
  at: AnalyticsDay,
  merge: (stored: string | null) => string,
): Promise<void> {
  const headKey = analyticsDayKey(at.projectId, at.indexName, at.day);
  for (let attempt = 1;; attempt++) {
    const { head, tally: stored } = await readDay(kv, at);
    const version = newTimedId();
    const bytes = encoder.encode(merge(stored));
    const chunks = await writeChunks(
      kv,
      bytes,
      (seq) => analyticsChunkKey(at.projectId, at.indexName, at.day, version, seq),
    );
    const committed = await whileBusy(() => kv.atomic().check(head).set(headKey, { version, chunks }).commit());
    if (committed.ok) {
      if (head.value !== null) await deleteTrees(kv, [analyticsChunksPrefix({ ...at, version: head.value.version })]);
      return;
    }
    await deleteTrees(kv, [analyticsChunksPrefix({ ...at, version })]);
    if (attempt >= MERGE_ATTEMPTS) throw new Error(`Too many concurrent merges of the analytics of ${at.day}`);
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
  }
}

/**
 * A day's head and its tally (null when the day has none). A merge that replaces the version while it is read deletes
 * its chunks: the head is then read again, a bounded number of times.
 */
async function readDay(
  kv: Deno.Kv,
  at: AnalyticsDay,
): Promise<{ head: Deno.KvEntryMaybe<DayHead>; tally: string | null }> {
  for (let attempt = 1;; attempt++) {
    const head = await kv.get<DayHead>(analyticsDayKey(at.projectId, at.indexName, at.day));
    const tally = head.value === null ? null : await readTally(kv, at, head.value);
    if (head.value === null || tally !== null) return { head, tally };
    if (attempt >= MERGE_ATTEMPTS) throw new Error(`The analytics of ${at.day} keep changing while read`);
  }
}

/** The tally of one version of a day; null when its chunks are gone. */
async function readTally(kv: Deno.Kv, at: AnalyticsDay, head: DayHead): Promise<string | null> {
  const bytes = await readChunks(
    kv,
    head.chunks,
    (seq) => analyticsChunkKey(at.projectId, at.indexName, at.day, head.version, seq),
  );
  return bytes === null ? null : decoder.decode(bytes);
}

/** The tallies (JSON) of an index's days from `from` to `to` (both included), oldest first; days without one are absent. */
export async function readAnalyticsDays(
  kv: Deno.Kv,
  projectId: string,
  indexName: string,
  range: { from: string; to: string },
): Promise<{ day: string; tally: string }[]> {
  const prefix = analyticsPrefix(projectId, indexName);
  const days: { day: string; tally: string }[] = [];
  // Days are `YYYY-MM-DD`, so their order as strings is their order in time, and "~" sorts after every digit.
  const heads = kv.list<DayHead>({ start: [...prefix, range.from], end: [...prefix, `${range.to}~`] });
  for await (const { key, value } of heads) {
    const at = { projectId, indexName, day: key[3] as string };
    // The version listed, or, when a merge replaced it since, the current one.
    const tally = await readTally(kv, at, value) ?? (await readDay(kv, at)).tally;
    if (tally !== null) days.push({ day: at.day, tally });
  }
  return days;
}

/**
 * Deletes the analytics of every day before `oldestKept` (`YYYY-MM-DD`), and the chunks of versions that no head names
 * (a merge that lost its commit and died before deleting them) once they are abandoned; returns the days deleted.
 */
export async function collectAnalytics(kv: Deno.Kv, oldestKept: string, now = Date.now()): Promise<number> {
  let deleted = 0;
  /** The versions that kept days' heads name, as JSON of [projectId, indexName, day, version]. */
  const named = new Set<string>();
  for await (const entry of kv.list<DayHead>({ prefix: analyticsPrefix() })) {
    const { key, value } = entry;
    const [, projectId, indexName, day] = key as [string, string, string, string];
    if (day >= oldestKept) {
      named.add(JSON.stringify([projectId, indexName, day, value.version]));
      continue;
    }
    // A merge of the day that commits meanwhile keeps it, to be collected the next time; its new version is not
    // abandoned yet, so the strays below leave it.
    const commit = await kv.atomic().check(entry).delete(key).commit();
    if (!commit.ok) continue;
    await deleteTrees(kv, [analyticsChunksPrefix({ projectId, indexName, day, version: value.version })]);
    deleted++;
  }
  const strays = new Map<string, Deno.KvKey>();
  for await (const { key } of kv.list({ prefix: analyticsChunksPrefix() })) {
    const [, projectId, indexName, day, version] = key as [string, string, string, string, string];
    const group = JSON.stringify([projectId, indexName, day, version]);
    if (!named.has(group) && isAbandoned(version, now)) {
      strays.set(group, analyticsChunksPrefix({ projectId, indexName, day, version }));
    }
  }
  await deleteTrees(kv, [...strays.values()]);
  return deleted;
}
