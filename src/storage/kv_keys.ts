/** Every Deno KV key the service uses, built in one place. */

/** A project's record: its id and key hash. */
export function projectKey(projectId: string) {
  return ["projects", projectId] as const;
}

/** The prefix of all project records. */
export function projectsPrefix() {
  return ["projects"] as const;
}

/** An index's record, addressed by its project and name. */
export function indexKey(projectId: string, indexName: string) {
  return ["indexes", projectId, indexName] as const;
}

/** The prefix of all index records of a project, in name order, or of every project. */
export function indexesPrefix(projectId?: string) {
  return projectId === undefined ? ["indexes"] as const : ["indexes", projectId] as const;
}

/** One part of a stored document: part 0 holds the head (hash, vector, metadata), later parts hold more text. */
export function docPartKey(indexId: string, docId: string, part: number) {
  return ["docs", indexId, docId, part] as const;
}

/** The prefix of all parts of every document of an index, in id order. */
export function docsPrefix(indexId: string) {
  return ["docs", indexId] as const;
}

/** One chunk of a large write's changes, staged before the index record makes them visible. */
export function stagedChunkKey(indexId: string, batchId: string, seq: number) {
  return ["staged", indexId, batchId, seq] as const;
}

/** The prefix of all staged chunks of an index, or of one batch of it. */
export function stagedBatchPrefix(indexId: string, batchId?: string) {
  return batchId === undefined ? ["staged", indexId] as const : ["staged", indexId, batchId] as const;
}

/** The change-log entry of one index revision: the document changes of the write that made it. */
export function logKey(indexId: string, revision: number) {
  return ["log", indexId, revision] as const;
}

/** The prefix of an index's whole change log, in revision order. */
export function logPrefix(indexId: string) {
  return ["log", indexId] as const;
}

/** One chunk of the documents of a queued write, staged until its job has run. */
export function jobChunkKey(indexId: string, jobId: string, seq: number) {
  return ["jobs", indexId, jobId, seq] as const;
}

/** The prefix of the staged documents of an index's queued writes, of one of them, or of every index's. */
export function jobPrefix(indexId?: string, jobId?: string): Deno.KvKey {
  if (indexId === undefined) return ["jobs"];
  return jobId === undefined ? ["jobs", indexId] : ["jobs", indexId, jobId];
}

/** The prefix of every index's snapshot pointer and lease. */
export function snapshotPrefix() {
  return ["snapshot"] as const;
}

/** The pointer to an index's current snapshot. */
export function snapshotPointerKey(indexId: string) {
  return ["snapshot", indexId] as const;
}

/** The lease of the one process that may write an index's next snapshot. */
export function snapshotLeaseKey(indexId: string) {
  return ["snapshot", indexId, "lease"] as const;
}

/** The queue message of an index's running job, where every process can find it to take over a dead runner's job. */
export function runningJobKey(indexId: string) {
  return ["jobs_running", indexId] as const;
}

/** The prefix of every index's running job. */
export function runningJobsPrefix() {
  return ["jobs_running"] as const;
}

/** One immutable chunk of one snapshot version. */
export function snapshotChunkKey(indexId: string, versionId: string, seq: number) {
  return ["snapshot_chunks", indexId, versionId, seq] as const;
}

/** The prefix of all snapshot chunks, of those of an index, or of one version of it. */
export function snapshotChunksPrefix(indexId?: string, versionId?: string) {
  if (indexId === undefined) return ["snapshot_chunks"] as const;
  return versionId === undefined
    ? ["snapshot_chunks", indexId] as const
    : ["snapshot_chunks", indexId, versionId] as const;
}

/** One chunk of one version of an index's settings (synonyms, pins), as JSON. */
export function settingsChunkKey(indexId: string, settingsId: string, seq: number) {
  return ["index_settings", indexId, settingsId, seq] as const;
}

/** The prefix of every index's settings, of those of an index, or of one version of them. */
export function settingsPrefix(indexId?: string, settingsId?: string): Deno.KvKey {
  if (indexId === undefined) return ["index_settings"];
  return settingsId === undefined ? ["index_settings", indexId] : ["index_settings", indexId, settingsId];
}

/** A marker that an index id's data is garbage: its record is gone, or it was never made visible. */
export function trashKey(indexId: string) {
  return ["trash", indexId] as const;
}

/** The prefix of all trash markers. */
export function trashPrefix() {
  return ["trash"] as const;
}

/** The key a readiness probe reads, to learn that the store answers; nothing is stored there. */
export function readinessKey() {
  return ["readyz"] as const;
}

/** The lease of the one instance that writes the store's next backup. */
export function backupLeaseKey() {
  return ["backup", "lease"] as const;
}

/** When the store's last backup was tried and last written, so that instances write one per interval. */
export function backupStateKey() {
  return ["backup", "state"] as const;
}

/**
 * The prefixes of the durable records a backup copies as they are, besides indexes and their documents: projects with
 * their key hash index, scoped keys with their hash and public key indexes and last use, aliases and webhook secrets.
 */
export function backedUpRecordPrefixes(): Deno.KvKey[] {
  return [
    ["projects"],
    ["project_key_hashes"],
    ["keys"],
    ["key_hashes"],
    ["public_key_projects"],
    ["key_usage"],
    ["aliases"],
    ["webhook_secrets"],
  ];
}

/** Every prefix that holds data of one index id, for garbage collection. */
export function indexDataPrefixes(indexId: string): Deno.KvKey[] {
  return [
    docsPrefix(indexId),
    logPrefix(indexId),
    jobPrefix(indexId),
    [...runningJobKey(indexId)],
    stagedBatchPrefix(indexId),
    [...snapshotPointerKey(indexId)],
    snapshotChunksPrefix(indexId),
    settingsPrefix(indexId),
  ];
}

/** A scoped key or a registered public key of a project. */
export function apiKeyKey(projectId: string, keyId: string) {
  return ["keys", projectId, keyId] as const;
}

/** The prefix of every scoped key of a project, in id order. */
export function apiKeysPrefix(projectId: string) {
  return ["keys", projectId] as const;
}

/** Which key a secret's hash belongs to, so that a presented secret finds its key with one read. */
export function apiKeyHashKey(keyHash: string) {
  return ["key_hashes", keyHash] as const;
}

/** Which project a project key's hash belongs to, so that a presented key is checked before the request's body is read. */
export function projectKeyHashKey(keyHash: string) {
  return ["project_key_hashes", keyHash] as const;
}

/** Which project a registered public key belongs to, so that a tenant token is checked before the body is read. */
export function publicKeyProjectKey(keyId: string) {
  return ["public_key_projects", keyId] as const;
}

/** When a key was last used, written apart from the key so that use never contends with the key's record. */
export function apiKeyUsageKey(projectId: string, keyId: string) {
  return ["key_usage", projectId, keyId] as const;
}

/** The prefix of the last-use records of a project's keys. */
export function apiKeyUsagePrefix(projectId: string) {
  return ["key_usage", projectId] as const;
}

/** The count of one key's requests in one window of a minute. */
export function rateWindowKey(keyId: string, window: number) {
  return ["rate", keyId, window] as const;
}

/** The record of one idempotency key of a project, by the key's hash. */
export function idempotencyKey(projectId: string, keyHash: string) {
  return ["idempotency", projectId, keyHash] as const;
}

/** A project's webhook secret, which signs the events sent to its `options.notify` URLs. */
export function webhookSecretKey(projectId: string) {
  return ["webhook_secrets", projectId] as const;
}

/** A webhook delivery still to be made (the outbox), by the id of the job whose end it reports. */
export function webhookOutboxKey(jobId: string) {
  return ["webhook_outbox", jobId] as const;
}

/** The prefix of every webhook delivery still to be made. */
export function webhookOutboxPrefix() {
  return ["webhook_outbox"] as const;
}

/** An alias of a project: another name that points at one of its indexes. */
export function aliasKey(projectId: string, alias: string) {
  return ["aliases", projectId, alias] as const;
}

/** The prefix of every alias of a project, in name order. */
export function aliasesPrefix(projectId: string) {
  return ["aliases", projectId] as const;
}

/** A deleted index that `restoreIndex` can bring back until its undo window ends, by its id. */
export function deletedIndexKey(projectId: string, indexId: string) {
  return ["deleted_indexes", projectId, indexId] as const;
}

/** The prefix of a project's deleted indexes, or of every project's. */
export function deletedIndexesPrefix(projectId?: string) {
  return projectId === undefined ? ["deleted_indexes"] as const : ["deleted_indexes", projectId] as const;
}

/** The format of the store's records, written at start: a newer one than this release reads is refused. */
export function storeFormatKey() {
  return ["store_format"] as const;
}

/**
 * The head of one UTC day (`YYYY-MM-DD`) of an index's search analytics: which version of its tally is current. The
 * index is told from others of its name by when it was created (its `createdAt`); heads written before that have no
 * last part.
 */
export function analyticsDayKey(projectId: string, indexName: string, day: string, indexCreatedAt: string) {
  return ["analytics", projectId, indexName, day, indexCreatedAt] as const;
}

/** The prefix of the analytics heads of an index name, of a project, or of every project. */
export function analyticsPrefix(projectId?: string, indexName?: string): Deno.KvKey {
  if (projectId === undefined) return ["analytics"];
  return indexName === undefined ? ["analytics", projectId] : ["analytics", projectId, indexName];
}

/** Every prefix that holds search analytics of a project: the heads and the chunks of all its indexes' days. */
export function projectAnalyticsPrefixes(projectId: string): Deno.KvKey[] {
  return [["analytics", projectId], ["analytics_chunks", projectId]];
}

/** One chunk of a version of a day's analytics tally. */
export function analyticsChunkKey(projectId: string, indexName: string, day: string, version: string, seq: number) {
  return ["analytics_chunks", projectId, indexName, day, version, seq] as const;
}

/** The prefix of the chunks of one version of a day's tally, or of every tally's. */
export function analyticsChunksPrefix(
  at?: { projectId: string; indexName: string; day: string; version: string },
): Deno.KvKey {
  if (at === undefined) return ["analytics_chunks"];
  return ["analytics_chunks", at.projectId, at.indexName, at.day, at.version];
}
