/**
 * Search analytics in the store: per index and UTC day (`YYYY-MM-DD`), a tally as JSON, cut into chunks under a
 * version id that the day's head names. An index is told from the others of its name by when it was created, so that
 * a new index of a deleted one's name, or of a project deleted and created again, starts afresh. An instance adds its
 * counts by reading the day, merging, and writing a new version that it commits only if the head is still the one it
 * read, so that the counts of several instances add up; the version it replaced is deleted after. Days older than the
 * retention are collected, an index's days go once it can no longer be restored, and a project's with it.
 */
import {
  analyticsChunkKey,
  analyticsChunksPrefix,
  analyticsDayKey,
  analyticsPrefix,
  projectAnalyticsPrefixes,
} from "./kv_keys.ts";
import { deleteTrees, readChunks, writeChunks } from "./kv_batches.ts";
import type { IndexRecord } from "./index_records.ts";
import { whileBusy } from "./store_busy.ts";
import { isAbandoned, newTimedId } from "./timed_id.ts";

/** The index whose analytics are counted, read or deleted: its project, its name, and when it was created. */
export interface AnalyticsIndex {
  projectId: string;
  indexName: string;
  /** The index's `createdAt`: `reembedIndex` and `restoreIndex` keep it, and a new index of the name has its own. */
  indexCreatedAt: string;
}

/** The analytics of the index that `record` is. */
export function analyticsIndexOf(record: Pick<IndexRecord, "projectId" | "name" | "createdAt">): AnalyticsIndex {
  return { projectId: record.projectId, indexName: record.name, indexCreatedAt: record.createdAt };
}

/** Where a day's analytics are: the index, and the day. */
export interface AnalyticsDay extends AnalyticsIndex {
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
 * Replaces a day's tally with `merge(stored)`, where `stored` is its JSON or null when the day has none yet, unless
 * `merge` gives null, which leaves the day as it is; `merge` runs again on the newer tally when another instance
 * changed the day meanwhile.
 */
export async function mergeAnalyticsDay(
  kv: Deno.Kv,
  at: AnalyticsDay,
  merge: (stored: string | null) => string | null,
): Promise<void> {
  const headKey = analyticsDayKey(at.projectId, at.indexName, at.day, at.indexCreatedAt);
  for (let attempt = 1;; attempt++) {
    const { head, tally: stored } = await readDay(kv, headKey, at);
    const merged = merge(stored);
    if (merged === null) return;
    const version = newTimedId();
    const chunks = await writeChunks(
      kv,
      encoder.encode(merged),
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

/** Where the chunks of a day's tallies are: the index's project and name, and the day. */
type TallyPlace = Pick<AnalyticsDay, "projectId" | "indexName" | "day">;

/**
 * The head at `headKey` and its tally (null when the day has none). A merge that replaces the version while it is read
 * deletes its chunks: the head is then read again, a bounded number of times.
 */
async function readDay(
  kv: Deno.Kv,
  headKey: Deno.KvKey,
  at: TallyPlace,
): Promise<{ head: Deno.KvEntryMaybe<DayHead>; tally: string | null }> {
  for (let attempt = 1;; attempt++) {
    const head = await kv.get<DayHead>(headKey);
    const tally = head.value === null ? null : await readTally(kv, at, head.value);
    if (head.value === null || tally !== null) return { head, tally };
    if (attempt >= MERGE_ATTEMPTS) throw new Error(`The analytics of ${at.day} keep changing while read`);
  }
}

/** The tally of one version of a day; null when its chunks are gone. */
async function readTally(kv: Deno.Kv, at: TallyPlace, head: DayHead): Promise<string | null> {
  const bytes = await readChunks(
    kv,
    head.chunks,
    (seq) => analyticsChunkKey(at.projectId, at.indexName, at.day, head.version, seq),
  );
  return bytes === null ? null : decoder.decode(bytes);
}

/**
 * The tallies (JSON) of an index's days from `from` to `to` (both included), oldest first; days without one are absent.
 * A day may come twice: as stored before indexes were told apart by their creation (read only from the day the index
 * was created on, since an earlier day was another index's), and as stored since.
 */
export async function readAnalyticsDays(
  kv: Deno.Kv,
  index: AnalyticsIndex,
  range: { from: string; to: string },
): Promise<{ day: string; tally: string }[]> {
  const prefix = analyticsPrefix(index.projectId, index.indexName);
  // An ISO time in UTC starts with its day.
  const createdOn = index.indexCreatedAt.slice(0, 10);
  const days: { day: string; tally: string }[] = [];
  // Days are `YYYY-MM-DD`, so their order as strings is their order in time, and "~" sorts after every digit.
  const heads = kv.list<DayHead>({ start: [...prefix, range.from], end: [...prefix, `${range.to}~`] });
  for await (const { key, value } of heads) {
    const [, , , day, createdAt] = key as [string, string, string, string, string?];
    if (createdAt === undefined ? day < createdOn : createdAt !== index.indexCreatedAt) continue;
    const at = { projectId: index.projectId, indexName: index.indexName, day };
    // The version listed, or, when a merge replaced it since, the current one.
    const tally = await readTally(kv, at, value) ?? (await readDay(kv, key, at)).tally;
    if (tally !== null) days.push({ day, tally });
  }
  return days;
}

/**
 * Deletes the days of one index, not those of another index of its name: once it can no longer be restored. A day that
 * an instance merges into meanwhile (counts made just before the index was deleted) is left to expire with the others.
 */
export async function deleteIndexAnalytics(kv: Deno.Kv, index: AnalyticsIndex): Promise<void> {
  for await (const entry of kv.list<DayHead>({ prefix: analyticsPrefix(index.projectId, index.indexName) })) {
    const [, , , day, createdAt] = entry.key as [string, string, string, string, string?];
    if (createdAt !== index.indexCreatedAt) continue;
    const commit = await kv.atomic().check(entry).delete(entry.key).commit();
    if (commit.ok) await deleteTrees(kv, [analyticsChunksPrefix({ ...index, day, version: entry.value.version })]);
  }
}

/** Deletes the analytics of every index of a project, as the project is deleted. */
export async function deleteProjectAnalytics(kv: Deno.Kv, projectId: string): Promise<void> {
  await deleteTrees(kv, projectAnalyticsPrefixes(projectId));
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
