/**
 * Document vectors in one flat `Float32Array`, one row per slot, with exact cosine similarity by linear scan. Vectors
 * are copied in, so that nothing outside can change them.
 */
import { grownTo } from "../util/typed_arrays.ts";

/** Slots and their cosine similarity to a query. */
export interface SlotScores {
  slots: number[];
  scores: number[];
}

/** Slots and their scores, in arrays of any kind, as ranking reads them. */
export interface ScoredSlots {
  slots: ArrayLike<number>;
  scores: ArrayLike<number>;
}

/** Stores one vector per slot; every vector has the dimensions of the first. */
export class VectorStore {
  #dims = 0;
  #data = new Float32Array(0);
  #norms = new Float64Array(0);

  /** The dimensions of the stored vectors, 0 before the first. */
  get dims(): number {
    return this.#dims;
  }

  /** Bytes of memory it holds. */
  get bytes(): number {
    return this.#data.byteLength + this.#norms.byteLength;
  }

  /** Makes room for `slots` vectors of `dims` dimensions at once, as a snapshot load knows both. */
  reserve(slots: number, dims: number): void {
    if (this.#dims === 0) this.#dims = dims;
    this.#grow(slots);
  }

  /** Stores the vector of a slot; throws if its dimensions differ from the others'. */
  set(slot: number, vector: Float32Array): void {
    if (this.#dims === 0) this.#dims = vector.length;
    this.checkDims(vector);
    this.#grow(slot + 1);
    this.#data.set(vector, slot * this.#dims);
    this.#norms[slot] = norm(vector);
  }

  /** The stored vector of a slot, as a view that callers must not change. */
  row(slot: number): Float32Array {
    return this.#data.subarray(slot * this.#dims, (slot + 1) * this.#dims);
  }

  /** The vectors of the first `count` slots, as one view that callers must not change. */
  rows(count: number): Float32Array {
    return this.#data.subarray(0, count * this.#dims);
  }

  /** The cosine similarity of `query` to the vector of each slot in `slots`. */
  scores(query: Float32Array, slots: Iterable<number>): SlotScores {
    this.checkDims(query);
    const result: SlotScores = { slots: [], scores: [] };
    const queryNorm = norm(query);
    const dims = this.#dims;
    const data = this.#data;
    for (const slot of slots) {
      const base = slot * dims;
      let dot = 0;
      for (let i = 0; i < dims; i++) dot += query[i]! * data[base + i]!;
      const norms = queryNorm * this.#norms[slot]!;
      result.slots.push(slot);
      // Rounding can carry a cosine just past ±1.
      result.scores.push(norms === 0 ? 0 : Math.max(-1, Math.min(1, dot / norms)));
    }
    return result;
  }

  /** Throws a RangeError unless `vector` has the stored dimensions. */
  checkDims(vector: Float32Array): void {
    if (vector.length !== this.#dims) {
      throw new RangeError(`Vector has ${vector.length} dimensions; this index holds ${this.#dims}`);
    }
  }

  #grow(slots: number): void {
    if (slots <= this.#norms.length) return;
    const capacity = Math.max(16, slots, this.#norms.length * 2);
    this.#data = grownTo(this.#data, capacity * this.#dims);
    this.#norms = grownTo(this.#norms, capacity);
  }
}

function norm(vector: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  return Math.sqrt(sum);
}
