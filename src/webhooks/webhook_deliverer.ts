/**
 * Delivers the webhook outbox, at least once, from any instance. Every instance looks once a second for deliveries
 * that are due, claims each by moving its next attempt past the attempt's deadline (one atomic check, so one instance
 * attempts it at a time), and POSTs the signed event. A 2xx answer ends the delivery; anything else, or no answer within
 * the timeout, is retried with exponential backoff (1 s, 2 s, 4 s, … up to an hour apart) until a day after the job
 * ended. An instance that dies mid-attempt leaves its claim to lapse, and the next sweep of any instance retries.
 */
import type { BackgroundTasks } from "../concurrency/background_tasks.ts";
import type { Metrics } from "../observability/metrics.ts";
import { getProject } from "../storage/project_records.ts";
import { listDeliveries, removeDelivery, updateDelivery, type WebhookDelivery } from "../storage/webhook_outbox.ts";
import { RETRY_WINDOW_MS } from "./job_end_delivery.ts";
import { notifyUrlProblem } from "./notify_target.ts";
import { projectWebhookSecret } from "./project_webhook_secret.ts";
import { signatureHeader } from "./webhook_signature.ts";
import { SIGNATURE_HEADER_NAME } from "../api/webhook_schemas.ts";

/** How long a receiver has to answer an attempt. */
const TIMEOUT_MS = 10_000;
/** How long a claim outlasts its attempt's timeout, for the store writes around it. */
const CLAIM_MARGIN_MS = 5_000;
/** The wait before the first retry; each later one waits twice as long as the one before, up to {@link MAX_BACKOFF_MS}. */
const FIRST_RETRY_MS = 1_000;
const MAX_BACKOFF_MS = 60 * 60 * 1000;
/** How often an instance looks for due deliveries. */
const SWEEP_MS = 1_000;
/** The most attempts one instance makes at a time. */
const MAX_IN_FLIGHT = 16;

/** What the deliverer needs, and settings that tests shorten. */
export interface DelivererOptions {
  metrics: Metrics;
  background: BackgroundTasks;
  /** `WEBHOOK_ALLOWED_HOSTS`, checked again before every attempt. */
  allowedHosts: readonly string[];
  /** How long after a job's end its delivery is retried (default a day). */
  retryWindowMs?: number;
  /** How long a receiver has to answer (default 10 s). */
  timeoutMs?: number;
}

/** Sends the events of the outbox to their receivers, with retries, on every instance. */
export class WebhookDeliverer {
  readonly #kv: Deno.Kv;
  readonly #options: DelivererOptions;
  readonly #retryWindowMs: number;
  readonly #timeoutMs: number;
  /** Deliveries this instance attempts now, by job id. */
  readonly #inFlight = new Set<string>();
  readonly #stopping = new AbortController();
  #sweeper: ReturnType<typeof setInterval> | undefined;
  #sweeping = false;

  constructor(kv: Deno.Kv, options: DelivererOptions) {
    this.#kv = kv;
    this.#options = options;
    this.#retryWindowMs = options.retryWindowMs ?? RETRY_WINDOW_MS;
    this.#timeoutMs = options.timeoutMs ?? TIMEOUT_MS;
  }

  /** Starts looking for due deliveries: now, for what an instance that stopped left, and then every second. */
  start(): void {
    const sweep = () => this.#options.background.run("webhook sweep", () => this.#sweep());
    sweep();
    this.#sweeper = setInterval(sweep, SWEEP_MS);
  }

  /** Stops looking, and cuts attempts under way short: their claims are given up, for a later sweep to retry them. */
  stop(): void {
    clearInterval(this.#sweeper);
    this.#stopping.abort();
  }

  async #sweep(): Promise<void> {
    if (this.#sweeping) return;
    this.#sweeping = true;
    try {
      const now = Date.now();
      for await (const entry of listDeliveries(this.#kv)) {
        if (this.#stopping.signal.aborted || this.#inFlight.size >= MAX_IN_FLIGHT) break;
        const { jobId } = entry.value.event;
        if (entry.value.nextAttemptAt > now || this.#inFlight.has(jobId)) continue;
        this.#inFlight.add(jobId);
        this.#options.background.run(
          `webhook of job ${jobId}`,
          () => this.#attempt(entry).finally(() => this.#inFlight.delete(jobId)),
        );
      }
    } finally {
      this.#sweeping = false;
    }
  }

  /** Claims a due delivery and attempts it once; then removes it, or schedules the next attempt, or gives it up. */
  async #attempt(due: Deno.KvEntry<WebhookDelivery>): Promise<void> {
    const claimUntil = Date.now() + this.#timeoutMs + CLAIM_MARGIN_MS;
    const claimed = await updateDelivery(
      this.#kv,
      due,
      { ...due.value, nextAttemptAt: claimUntil },
      this.#retryWindowMs,
    );
    if (claimed === null) return; // Another instance claimed it, or delivered it.
    const delivery = claimed.value;
    const refused = await this.#refusal(delivery);
    if (refused !== null) return await this.#giveUp(claimed, refused);
    const failure = await this.#post(delivery);
    if (failure === null) {
      this.#options.metrics.countWebhook("ok");
      await removeDelivery(this.#kv, claimed);
      return;
    }
    if (this.#stopping.signal.aborted) {
      // Cut short by a shutdown: give up the claim, so that the next sweep of any instance attempts it at once.
      await updateDelivery(this.#kv, claimed, { ...delivery, nextAttemptAt: Date.now() }, this.#retryWindowMs);
      return;
    }
    this.#options.metrics.countWebhook("failed");
    const attempts = delivery.attempts + 1;
    const now = Date.now();
    const deadline = delivery.createdAt + this.#retryWindowMs;
    if (now >= deadline) return await this.#giveUp(claimed, `${failure}, after ${attempts} attempts`);
    const next = Math.min(now + backoff(attempts), deadline);
    console.warn(
      `Webhook of job ${delivery.event.jobId} to ${new URL(delivery.url).host} failed (${failure}); attempt ` +
        `${attempts + 1} in ${Math.round((next - now) / 1000)} s`,
    );
    const retry: WebhookDelivery = { ...delivery, attempts, nextAttemptAt: next, lastError: failure };
    await updateDelivery(this.#kv, claimed, retry, this.#retryWindowMs);
  }

  /** Why a delivery may no longer be sent at all, or null when it may. */
  async #refusal(delivery: WebhookDelivery): Promise<string | null> {
    const problem = notifyUrlProblem(delivery.url, this.#options.allowedHosts);
    if (problem !== null) return problem;
    if (await getProject(this.#kv, delivery.projectId) === null) return `project "${delivery.projectId}" was deleted`;
    return null;
  }

  async #giveUp(claimed: Deno.KvEntry<WebhookDelivery>, reason: string): Promise<void> {
    this.#options.metrics.countWebhook("given_up");
    console.error(`Giving up the webhook of job ${claimed.value.event.jobId}: ${reason}`);
    await removeDelivery(this.#kv, claimed, { ifUnchanged: true });
  }

  /** POSTs the signed event once; null when the receiver answered 2xx, otherwise what went wrong. */
  async #post(delivery: WebhookDelivery): Promise<string | null> {
    const body = JSON.stringify(delivery.event);
    const secret = await projectWebhookSecret(this.#kv, delivery.projectId);
    const signature = await signatureHeader(secret, body, Math.floor(Date.now() / 1000));
    try {
      const response = await fetch(delivery.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "quire-webhooks",
          [SIGNATURE_HEADER_NAME]: signature,
        },
        body,
        // A redirect could lead outside WEBHOOK_ALLOWED_HOSTS: it counts as a failed attempt.
        redirect: "manual",
        signal: AbortSignal.any([AbortSignal.timeout(this.#timeoutMs), this.#stopping.signal]),
      });
      await response.body?.cancel();
      return response.status >= 200 && response.status < 300 ? null : `HTTP ${response.status}`;
    } catch (error) {
      if (error instanceof DOMException && error.name === "TimeoutError") {
        return `no answer within ${this.#timeoutMs / 1000} s`;
      }
      return error instanceof Error ? error.message : String(error);
    }
  }
}

/** The wait after the `attempts`-th failed attempt: 1 s, 2 s, 4 s, … up to an hour. */
function backoff(attempts: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** (attempts - 1), MAX_BACKOFF_MS);
}
