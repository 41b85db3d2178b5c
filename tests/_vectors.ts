/** Seeded vectors for the tests and benchmarks of vector search, the same in every run. */

/** A seeded generator of standard normal numbers (a linear congruential source through Box-Muller). */
export function normals(seed: number): () => number {
  let state = seed;
  const uniform = () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return (state + 1) / 4294967297;
  };
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}
