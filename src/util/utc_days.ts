/** UTC days as search analytics name them: `YYYY-MM-DD`. */

const DAY_MS = 24 * 60 * 60 * 1000;

/** The UTC day of a time in milliseconds since the epoch. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Whether `text` is a real day written `YYYY-MM-DD` (not `2026-02-30`). */
export function isUtcDay(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(text) && utcDay(Date.parse(`${text}T00:00:00Z`) || 0) === text;
}

/** The days from `from` to `to`, both included, oldest first; none when `to` is before `from`. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let ms = Date.parse(`${from}T00:00:00Z`); ms <= end; ms += DAY_MS) days.push(utcDay(ms));
  return days;
}

/** The day `count` days before `day` (after, when negative). */
export function daysBefore(day: string, count: number): string {
  return utcDay(Date.parse(`${day}T00:00:00Z`) - count * DAY_MS);
}
