/**
 * Exact cosine similarity over one flat `Float32Array` of vectors: a linear scan with no per-document objects, and
 * vectors copied in, so that nothing outside can change them.
 */

/** The documents that a scan kept, with their similarity to the query, in slot order. */
export interface Similarities {
  ids: string[];
  scores: number[];
}

/** Stores one vector per document id; all vectors have the dimensions of the first. */
export class VectorStore {
  #dims = 0;
  #data = new Float32Array(0);
  #norms = new Float64Array(0);
  readonly #ids: string[] = [];
  readonly #slots = new Map<string, number>();

  /** How many vectors it holds. */
  get size(): number {
    return this.#ids.length;
  }

  /** Stores (or replaces) the vector of `id`; throws if its dimensions differ from the others'. */
  set(id: string, vector: Float32Array): void {
    if (this.#dims === 0) this.#dims = vector.length;
    this.#checkDims(vector);
    let slot = this.#slots.get(id);
    if (slot === undefined) {
      slot = this.#ids.length;
      this.#grow(slot + 1);
      this.#ids.push(id);
      this.#slots.set(id, slot);
    }
    this.#data.set(vector, slot * this.#dims);
    this.#norms[slot] = norm(vector);
  }

  /** Removes the vector of `id`, if any, by moving the last vector into its slot. */
  remove(id: string): void {
    const slot = this.#slots.get(id);
    if (slot === undefined) return;
    const last = this.#ids.length - 1;
    const lastId = this.#ids.pop()!;
    this.#slots.delete(id);
    if (slot !== last) {
      this.#data.copyWithin(slot * this.#dims, last * this.#dims, (last + 1) * this.#dims);
      this.#norms[slot] = this.#norms[last]!;
      this.#ids[slot] = lastId;
      this.#slots.set(lastId, slot);
    }
  }

  /** The cosine similarity of `query` to every stored vector whose id `keep` accepts (all when omitted). */
  similarities(query: Float32Array, keep?: (id: string) => boolean): Similarities {
    const result: Similarities = { ids: [], scores: [] };
    if (this.size === 0) return result;
    this.#checkDims(query);
    const dims = this.#dims;
    const data = this.#data;
    const queryNorm = norm(query);
    for (let slot = 0; slot < this.#ids.length; slot++) {
      const id = this.#ids[slot]!;
      if (keep !== undefined && !keep(id)) continue;
      const base = slot * dims;
      let dot = 0;
      for (let i = 0; i < dims; i++) dot += query[i]! * data[base + i]!;
      const norms = queryNorm * this.#norms[slot]!;
      result.ids.push(id);
      // Rounding can carry a cosine just past ±1.
      result.scores.push(norms === 0 ? 0 : Math.max(-1, Math.min(1, dot / norms)));
    }
    return result;
  }

  #checkDims(vector: Float32Array): void {
    if (vector.length !== this.#dims) {
      throw new RangeError(`Vector has ${vector.length} dimensions; this index holds ${this.#dims}`);
    }
  }

  #grow(slots: number): void {
    if (slots <= this.#norms.length) return;
    const capacity = Math.max(16, this.#norms.length * 2);
    const data = new Float32Array(capacity * this.#dims);
    data.set(this.#data);
    this.#data = data;
    const norms = new Float64Array(capacity);
    norms.set(this.#norms);
    this.#norms = norms;
  }
}

function norm(vector: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  return Math.sqrt(sum);
}
