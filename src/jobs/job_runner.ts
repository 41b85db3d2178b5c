/**
 * Runs queued writes (`options.wait: false`) exactly once across every instance over the store. A job runs under a
 * lease on its index record, renewed while it runs; every instance looks for running jobs whose lease has expired (their
 * runner died) and takes them over. The job's final commit lands only while its runner still holds the job, so a
 * runner that stalled past its lease cannot commit after its successor.
 */
import type { ServiceContext } from "../context.ts";
import { ApiError } from "../api/api_error.ts";
import { type IndexJob, type IndexRecord, readSettledIndex, replaceIndexRecord } from "../storage/index_records.ts";
import { clearJob, type IndexJobMessage, listRunningJobs, readJobDocs } from "../storage/job_docs.ts";
import { timeOfId } from "../storage/timed_id.ts";
import { JobLostError, writeDocs } from "../writes/write_docs.ts";
import { reembedDocuments } from "../reembedding/reembed_documents.ts";
import { asForeground } from "../util/time_slices.ts";
import { jobEndMutation } from "../webhooks/job_end_delivery.ts";

/** How long a runner holds a job without renewing its lease; a dead runner's job is taken over after this. */
export const JOB_LEASE_MS = 5_000;
/** How often a runner renews its lease, and how often every instance looks for expired leases. */
const HEARTBEAT_MS = 1_500;
const SWEEP_MS = 1_000;
/** Attempts of a job record update before it is skipped (the next one, or the final commit, catches up). */
const UPDATE_ATTEMPTS = 3;

/** Runs job messages from the queue, and takes over jobs whose runner died. */

/** The least time between two progress reports of a job. */
const PROGRESS_EVERY_MS = 250;
export class JobRunner {
  readonly #ctx: ServiceContext;
  /** Jobs this instance runs now, so that a queue redelivery and a sweep never run one twice here. */
  readonly #running = new Set<string>();
  #sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(ctx: ServiceContext) {
    this.#ctx = ctx;
  }

  /** Starts looking for jobs to take over. */
  start(): void {
    this.#sweeper = setInterval(() => {
      this.#ctx.background.run("job sweep", () => this.#sweep());
    }, SWEEP_MS);
  }

  /** Stops looking; jobs already running go on to their end. */
  stop(): void {
    clearInterval(this.#sweeper);
  }

  /**
   * Runs one job message to its end (done, failed, or found stale), unless a live runner holds it; `takeOver` counts
   * it as taken over from a runner whose lease expired.
   */
  async run(message: IndexJobMessage, options: { takeOver?: boolean } = {}): Promise<void> {
    if (this.#running.has(message.jobId)) return;
    this.#running.add(message.jobId);
    try {
      await asForeground(() => this.#run(message, options.takeOver ?? false));
    } finally {
      this.#running.delete(message.jobId);
    }
  }

  async #sweep(now = Date.now()): Promise<void> {
    for await (const message of listRunningJobs(this.#ctx.kv)) {
      if (this.#running.has(message.jobId)) continue;
      const entry = await readSettledIndex(this.#ctx.kv, message.projectId, message.indexName);
      const job = runningJob(entry.value, message);
      if (job === undefined) {
        // Finished, failed or gone, and its runner died before clearing up.
        if (!isYoung(message, now)) await clearJob(this.#ctx.kv, message.indexId, message.jobId);
        continue;
      }
      if (leaseEnd(job) > now) continue;
      this.#ctx.background.run(`job ${message.jobId}`, () => this.run(message, { takeOver: true }));
    }
  }

  async #run(message: IndexJobMessage, takeOver: boolean): Promise<void> {
    const ctx = this.#ctx;
    const owner = ctx.instance.id;
    const { projectId, indexName, indexId, jobId } = message;
    const taken = await this.#update(message, (job) => {
      if (job.owner !== undefined && job.owner !== owner && leaseEnd(job) > Date.now()) return null;
      return { ...job, owner, leaseUntil: Date.now() + JOB_LEASE_MS };
    });
    if (taken === "gone") {
      await clearJob(ctx.kv, indexId, jobId);
      return;
    }
    if (taken !== "updated") return; // A live runner holds it.
    if (takeOver) ctx.metrics.countJobTakenOver();
    const heartbeat = setInterval(() => {
      this.#update(message, (job) => job.owner === owner ? { ...job, leaseUntil: Date.now() + JOB_LEASE_MS } : null)
        .catch((error) => console.error(`Cannot renew the lease of job ${jobId}:`, error));
    }, HEARTBEAT_MS);
    // Progress rewrites the index record, which writes during a re-embedding commit against: a few times a second.
    let reportedAt = 0;
    const onProgress = async (done: number) => {
      if (Date.now() - reportedAt < PROGRESS_EVERY_MS) return;
      reportedAt = Date.now();
      await this.#update(message, (job) => job.owner === owner ? { ...job, done } : null);
    };
    // The end of the job and its webhook delivery land in one commit, so that a job never ends unreported.
    const { notify } = message;
    const finish = notify === undefined ? undefined : (
      record: IndexRecord,
      error?: string,
    ) => [jobEndMutation(notify, error === undefined ? { jobId, record } : { jobId, record, error })];
    try {
      const { reembedModelId } = message;
      const docs = reembedModelId === undefined ? await readJobDocs(ctx.kv, message) : [];
      try {
        if (docs === null) throw new ApiError(500, "The queued documents are missing");
        if (reembedModelId === undefined) {
          await writeDocs(ctx, {
            projectId,
            indexName,
            docs,
            upsert: message.upsert,
            job: { id: jobId, owner, finish },
            onProgress,
          });
        } else {
          const job = { id: jobId, owner, finish };
          await reembedDocuments(ctx, { projectId, indexName, indexId, modelId: reembedModelId, job, onProgress });
        }
      } catch (error) {
        if (error instanceof JobLostError) return; // Another instance took it over: its runner finishes it.
        if (!(error instanceof ApiError)) throw error; // Storage trouble: the queue or a sweep runs it again.
        if (error.status >= 500) console.error(`Job ${jobId} of index "${indexName}" failed:`, error.cause ?? error);
        await this.#update(
          message,
          (job) => job.owner === owner ? { ...job, state: "failed", error: error.message } : null,
          finish && ((record) => finish(record, error.message)),
        );
      }
      await clearJob(ctx.kv, indexId, jobId);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /**
   * Changes the job on the index record while the record still runs this job; `change` returns null to leave it, and
   * `also` gives what else the commit writes, given the new record. Returns whether it changed it, left it, or found
   * the job gone.
   */
  async #update(
    message: IndexJobMessage,
    change: (job: IndexJob) => IndexJob | null,
    also?: (record: IndexRecord) => Deno.KvMutation[],
  ): Promise<"updated" | "left" | "gone"> {
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const entry = await readSettledIndex(this.#ctx.kv, message.projectId, message.indexName);
      const job = runningJob(entry.value, message);
      if (job === undefined) return "gone";
      const changed = change(job);
      if (changed === null) return "left";
      const record: IndexRecord = { ...entry.value!, job: changed };
      const committed = await replaceIndexRecord(
        this.#ctx.kv,
        entry as Deno.KvEntry<IndexRecord>,
        record,
        also?.(record),
      );
      this.#ctx.records.invalidate(entry.key);
      if (committed) return "updated";
    }
    return "left";
  }
}

/** The job of `record` if it is the running job that `message` names. */
function runningJob(record: IndexRecord | null, message: IndexJobMessage): IndexJob | undefined {
  const job = record?.job;
  return record?.id === message.indexId && job?.id === message.jobId && job.state === "running" ? job : undefined;
}

/** When a job's lease ends: its renewed end, or, before any runner took it, one lease after it was queued. */
function leaseEnd(job: IndexJob): number {
  return job.leaseUntil ?? timeOfId(job.id) + JOB_LEASE_MS;
}

/** Whether a job was queued so recently that its record may not show it yet. */
function isYoung(message: IndexJobMessage, now: number): boolean {
  return now - timeOfId(message.jobId) < JOB_LEASE_MS;
}
