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

/**
 * The `seed`th unit vector of `dims` dimensions, the same in every run: uniform on the sphere (near-random, like
 * embeddings of short, varied texts), or, when `clustered`, around one of 100 centres.
 */
export function unitVector(seed: number, dims: number, clustered: boolean): number[] {
  const normal = normals(seed);
  const centre = normals(1_000_000 + seed % 100);
  const vector = Array.from({ length: dims }, () => clustered ? centre() + 0.7 * normal() : normal());
  const length = Math.hypot(...vector);
  return vector.map((x) => x / length);
}
