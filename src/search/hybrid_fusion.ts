/**
 * Hybrid scores: an even, weighted sum of the BM25 score divided by the best BM25 score, and the cosine similarity
 * min-max scaled (and clamped) to [0, 1]. The scale is taken from a fixed pool of documents, the nearest ones and the
 * best-matching ones, so that a document's score does not depend on which page is asked or how it was found.
 */

/** The weight of each part; Orama's default hybrid weights. */
export const HYBRID_WEIGHTS = { text: 0.5, vector: 0.5 } as const;

/** How the two parts are scaled. */
export interface FusionScale {
  maxText: number;
  minCosine: number;
  maxCosine: number;
}

/** The scale of a pool: the cosines of its documents, and the best BM25 score of all. */
export function fusionScale(poolCosines: Iterable<number>, maxText: number): FusionScale {
  let minCosine = Infinity;
  let maxCosine = -Infinity;
  for (const cosine of poolCosines) {
    minCosine = Math.min(minCosine, cosine);
    maxCosine = Math.max(maxCosine, cosine);
  }
  return { maxText, minCosine, maxCosine };
}

/**
 * Fuses per-document cosine similarities with BM25 scores (0 for a document that matches no query term). When every
 * cosine of the pool is the same, the vector part is 1 for a document at least that similar.
 */
export function fuseScores(cosines: readonly number[], bm25: readonly number[], scale: FusionScale): number[] {
  const { maxText, minCosine, maxCosine } = scale;
  const range = maxCosine - minCosine;
  return cosines.map((cosine, i) => {
    const text = maxText === 0 ? 0 : bm25[i]! / maxText;
    const vector = range === 0 ? (cosine >= minCosine ? 1 : 0) : Math.min(1, Math.max(0, (cosine - minCosine) / range));
    return HYBRID_WEIGHTS.text * text + HYBRID_WEIGHTS.vector * vector;
  });
}
