/** Durations as operators write them in settings: a whole number and a unit, `90s`, `30m`, `6h`, `7d`. */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The milliseconds of a duration such as `90s`, `30m`, `6h` or `0`; null when it is not one. */
export function parseDuration(text: string): number | null {
  if (text === "0") return 0;
  const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(text);
  return match === null ? null : Number(match[1]) * UNIT_MS[match[2]!]!;
}
