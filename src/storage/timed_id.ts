/**
 * Ids of staged data (batches, queued jobs, snapshot versions) that sort by, and tell, their creation time, so that
 * garbage collection can tell data a dead writer abandoned from data a live one is still writing.
 */

/** Staged data that nothing references this long after its creation was abandoned by a writer that died. */
export const ABANDONED_AFTER_MS = 60 * 60 * 1000;

const TIME_DIGITS = 10;

/** A fresh id whose first part is its creation time. */
export function newTimedId(now = Date.now()): string {
  return `${now.toString(36).padStart(TIME_DIGITS, "0")}-${crypto.randomUUID()}`;
}

/** Whether data under `id` may be collected at `now` once nothing references it; ids of no known time may. */
export function isAbandoned(id: string, now = Date.now()): boolean {
  return now - timeOfId(id) >= ABANDONED_AFTER_MS;
}

/** When `id` was made (milliseconds since the epoch); 0 for an id of no known time. */
export function timeOfId(id: string): number {
  const time = id.length > TIME_DIGITS && id[TIME_DIGITS] === "-" ? parseInt(id.slice(0, TIME_DIGITS), 36) : NaN;
  return time >= 0 ? time : 0;
}
