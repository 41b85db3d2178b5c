/** Seeded pseudo-random numbers: the same sequence for the same seed, where a sample or a fixture must repeat. */

/** Mulberry32: uniform numbers in [0, 1) from a 32-bit seed, with the full 32 bits of state used exactly. */
export function mulberry32(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
