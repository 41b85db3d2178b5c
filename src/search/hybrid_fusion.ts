/**
 * Hybrid scores: an even, weighted sum of the BM25 score divided by the best BM25 score among the candidates, and
 * the cosine similarity min-max scaled over the candidates. Both parts lie in [0, 1], and so does the sum.
 */

/** The weight of each part; Orama's default hybrid weights. */
export const HYBRID_WEIGHTS = { text: 0.5, vector: 0.5 } as const;

/**
 * Fuses per-candidate cosine similarities with BM25 scores (0 for a candidate that matches no query term). When
 * every candidate has the same similarity, the vector part is 1 for all.
 */
export function fuseScores(cosines: readonly number[], bm25: readonly number[]): number[] {
  let maxText = 0;
  let minCosine = Infinity;
  let maxCosine = -Infinity;
  for (let i = 0; i < cosines.length; i++) {
    maxText = Math.max(maxText, bm25[i]!);
    minCosine = Math.min(minCosine, cosines[i]!);
    maxCosine = Math.max(maxCosine, cosines[i]!);
  }
  const cosineRange = maxCosine - minCosine;
  return cosines.map((cosine, i) => {
    const text = maxText === 0 ? 0 : bm25[i]! / maxText;
    const vector = cosineRange === 0 ? 1 : (cosine - minCosine) / cosineRange;
    return HYBRID_WEIGHTS.text * text + HYBRID_WEIGHTS.vector * vector;
  });
}
