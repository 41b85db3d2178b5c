/**
 * Where a webhook may go: `options.notify.url` is checked when the write is queued, against `WEBHOOK_ALLOWED_HOSTS`,
 * and again before each delivery, in case an operator has since taken the host off the list.
 */
import { ApiError } from "../api/api_error.ts";
import type { NotifyOptions } from "../api/webhook_api_types.ts";
import { hostAllowed, isLoopbackHostname } from "../util/host_names.ts";

/** What a queued write's options say about waiting and notifying. */
export interface QueuedOptions {
  wait?: boolean | undefined;
  notify?: NotifyOptions | undefined;
}

/**
 * The checked `notify` of a write's options, or undefined without one. 400 when the write is not queued
 * (`options.wait` is not `false`) or the URL may not be sent to (see {@link notifyUrlProblem}).
 */
export function checkedNotify(
  options: QueuedOptions | undefined,
  allowedHosts: readonly string[],
): NotifyOptions | undefined {
  if (options?.notify === undefined) return undefined;
  if (options.wait !== false) {
    throw new ApiError(
      400,
      'Invalid "options.notify": a webhook reports the end of a queued job, so it needs "options.wait": false',
    );
  }
  const problem = notifyUrlProblem(options.notify.url, allowedHosts);
  if (problem !== null) throw new ApiError(400, `Invalid "options.notify.url": ${problem}`);
  return { url: new URL(options.notify.url).href };
}

/**
 * Why quire may not POST to `text`, or null when it may: it must be an absolute http(s) URL without a user name or
 * password, whose host is in `allowedHosts`, and `https` unless that host is a loopback address.
 */
export function notifyUrlProblem(text: string, allowedHosts: readonly string[]): string | null {
  if (allowedHosts.length === 0) {
    return "webhooks are off on this server: WEBHOOK_ALLOWED_HOSTS lists no host";
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `"${text.slice(0, 256)}" is not an absolute URL`;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return `the scheme "${url.protocol.slice(0, -1)}" is not taken: use https`;
  }
  if (url.username !== "" || url.password !== "") return "the URL must not hold a user name or password";
  if (!hostAllowed(url, allowedHosts)) return `host "${url.host}" is not in WEBHOOK_ALLOWED_HOSTS`;
  if (url.protocol === "http:" && !isLoopbackHostname(url.hostname)) {
    return `use https: http is taken only for loopback hosts (127.0.0.1, ::1, localhost), not "${url.host}"`;
  }
  return null;
}
