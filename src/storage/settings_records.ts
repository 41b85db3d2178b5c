/**
 * An index's settings (synonyms, pins) in the store. Each version is JSON cut into chunks under a fresh id beside the
 * index's other data (a version can pass a value's 64 KiB), and the index record names the version it shows, so that
 * one commit of the record changes them and every reader of the record sees them. A version is never changed: a
 * change writes a new one, commits the record, and then deletes the old one.
 */
import type { SettingsVersion } from "./index_records.ts";
import { settingsChunkKey, settingsPrefix } from "./kv_keys.ts";
import { deleteTrees, readChunks, writeChunks } from "./kv_batches.ts";
import { newTimedId } from "./timed_id.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Writes settings as a new version of index `indexId`'s settings, which no record names yet. */
export async function writeSettingsVersion(kv: Deno.Kv, indexId: string, settings: unknown): Promise<SettingsVersion> {
  const id = newTimedId();
  const chunks = await writeChunks(
    kv,
    encoder.encode(JSON.stringify(settings)),
    (seq) => settingsChunkKey(indexId, id, seq),
  );
  return { id, chunks };
}

/** The settings of a version; null when its chunks are gone (a newer version replaced it meanwhile). */
export async function readSettingsVersion(kv: Deno.Kv, indexId: string, version: SettingsVersion): Promise<unknown> {
  const bytes = await readChunks(kv, version.chunks, (seq) => settingsChunkKey(indexId, version.id, seq));
  return bytes === null ? null : JSON.parse(decoder.decode(bytes));
}

/** Deletes a version that no record names any more. */
export async function deleteSettingsVersion(kv: Deno.Kv, indexId: string, settingsId: string): Promise<void> {
  await deleteTrees(kv, [settingsPrefix(indexId, settingsId)]);
}

/**
 * Copies a version of index `from`'s settings to index id `to` (a re-embedding moves an index to a new id), under a
 * fresh version id, so that the copy is as new as a version written now; null when the version is gone.
 */
export async function copySettingsVersion(
  kv: Deno.Kv,
  from: string,
  to: string,
  version: SettingsVersion,
): Promise<SettingsVersion | null> {
  const bytes = await readChunks(kv, version.chunks, (seq) => settingsChunkKey(from, version.id, seq));
  if (bytes === null) return null;
  const id = newTimedId();
  return { id, chunks: await writeChunks(kv, bytes, (seq) => settingsChunkKey(to, id, seq)) };
}

/** The stored entries of a version, for a backup; null when they are gone. */
export async function settingsEntries(
  kv: Deno.Kv,
  indexId: string,
  version: SettingsVersion,
): Promise<{ key: Deno.KvKey; value: unknown }[] | null> {
  const entries = await Array.fromAsync(kv.list({ prefix: settingsPrefix(indexId, version.id) }));
  if (entries.length !== version.chunks) return null;
  return entries.map(({ key, value }) => ({ key, value }));
}
