/**
 * The slot table of one index: each document lives in a slot, and each of its passages' vectors in a passage slot, so
 * that the text, vector and metadata sides address documents and passages by number. Slots of deleted documents and
 * passages are reused. Its arrays are exposed read-only for the loops of a search, which index them directly.
 */
import type { DocContent, IndexedDoc } from "./indexed_doc.ts";
import type { SearchIndexParts } from "./search_index_parts.ts";
import { CONTENT_OBJECT_BYTES, type StoredContents } from "./stored_contents.ts";
import type { VectorStore } from "./vector_store.ts";
import type { ViewedParts } from "./snapshot_view.ts";

/** Memory per slot beyond its document: its place in the arrays, the id map and its list of passages. */
const BYTES_PER_SLOT = 96;
/** Memory per passage slot beyond its vector: its owner and its place in the document's list. */
const BYTES_PER_PASSAGE = 16;

/** The documents of an index by slot, their passages by passage slot, and the free slots of each. */
export class DocSlots {
  readonly #ids: (string | undefined)[];
  /** Contents by slot, once read: a restored slot's is decoded from {@link #stored} when first read. */
  readonly #contents: (DocContent | undefined)[];
  readonly #stored: StoredContents | undefined;
  /**
   * Slots whose restored content is still the stored one: counted at the load as if decoded, so that the budget never
   * finds an index larger than it measured once its documents are read.
   */
  readonly #restored: Uint8Array;
  readonly #passages: (number[] | undefined)[];
  /**
   * The slot of each id, made when first asked for: a restored index that only answers searches never needs it, and
   * making it was a quarter of a large load.
   */
  #slots: Map<string, number> | undefined;
  #size = 0;
  readonly #free: number[] = [];
  /**
   * What a snapshot view reads of the table: ids, contents (decoded without being kept, so that a snapshot of a
   * restored index does not decode it all into memory), passages, and how many passage slots (vector rows) exist.
   */
  get viewed(): Pick<ViewedParts, "ids" | "contentOf" | "passages" | "rows"> {
    const contentOf = (slot: number) => this.contentOf(slot, false);
    return { ids: this.#ids, contentOf, passages: this.#passages, rows: this.#owners.length };
  }

  /** The document slot of each passage slot; -1 for a free one. */
  readonly #owners: number[] = [];
  readonly #freePassages: number[] = [];
  #passageCount = 0;
  /** Bytes of the documents' ids, texts and metadata, estimated as they come and go. */
  #contentBytes = 0;

  /**
   * Takes over the arrays of slots that a snapshot restored, and its stored contents (they are the table's own from
   * then on), or starts empty.
   */
  constructor(restored: Partial<Pick<SearchIndexParts, "ids" | "stored" | "passages">>) {
    this.#ids = restored.ids ?? [];
    this.#contents = [];
    this.#stored = restored.stored;
    this.#passages = restored.passages ?? [];
    this.#contentBytes = this.#stored?.bytes ?? 0;
    this.#restored = new Uint8Array(this.#stored === undefined ? 0 : this.#ids.length);
    for (let slot = 0; slot < this.#ids.length; slot++) {
      const id = this.#ids[slot];
      if (id === undefined) this.#free.push(slot);
      else {
        this.#size++;
        this.#restored[slot] = 1;
        this.#contentBytes += 2 * id.length + this.#stored!.decodedBytes(slot);
        for (const passage of this.#passages[slot]!) {
          while (this.#owners.length <= passage) this.#owners.push(-1);
          this.#owners[passage] = slot;
          this.#passageCount++;
        }
      }
    }
    this.#free.reverse();
    for (let passage = this.#owners.length - 1; passage >= 0; passage--) {
      if (this.#owners[passage] === -1) this.#freePassages.push(passage);
    }
  }

  /** The id of each slot; undefined for a free one. */
  get ids(): readonly (string | undefined)[] {
    return this.#ids;
  }

  /**
   * The content of a slot, undefined for a free one: decoded from the stored contents when first read, and kept unless
   * `keep` is false.
   */
  contentOf(slot: number, keep = true): DocContent | undefined {
    const content = this.#contents[slot];
    if (content !== undefined || this.#ids[slot] === undefined) return content;
    const decoded = this.#stored!.content(slot);
    if (keep) this.#contents[slot] = decoded;
    return decoded;
  }

  /** The passage slots of each slot, in passage order; undefined for a free one. */
  get passages(): readonly (readonly number[] | undefined)[] {
    return this.#passages;
  }

  /** The document slot of each passage slot; -1 for a free one. */
  get owners(): readonly number[] {
    return this.#owners;
  }

  /** How many documents it holds. */
  get size(): number {
    return this.#size;
  }

  /** How many passages (and so vectors) it holds. */
  get passageCount(): number {
    return this.#passageCount;
  }

  /** How many passage slots are free; they may still hold the vectors of their former passages. */
  get freePassageCount(): number {
    return this.#freePassages.length;
  }

  /** Whether every document is one passage (each has at least one). */
  get onePassageEach(): boolean {
    return this.#passageCount === this.#size;
  }

  /** Bytes of memory it holds, estimated: documents, and the table's own arrays and map, but not the vectors. */
  get bytes(): number {
    return this.#contentBytes + this.#ids.length * BYTES_PER_SLOT + this.#owners.length * BYTES_PER_PASSAGE;
  }

  /** The slot of a document, if it holds one of that id. */
  slotOf(id: string): number | undefined {
    return this.#idMap().get(id);
  }

  /**
   * The text and metadata of a document. `slot`, where a search found it, spares looking the id up (which makes the id
   * map of a restored index) while the slot still holds that id.
   */
  content(id: string, slot?: number): DocContent | undefined {
    const at = slot !== undefined && this.#ids[slot] === id ? slot : this.slotOf(id);
    return at === undefined ? undefined : this.contentOf(at);
  }

  /** The slot that the next {@link fill} takes, so that whoever reads the slot can be told before it changes. */
  get freeSlot(): number {
    return this.#free.at(-1) ?? this.#ids.length;
  }

  /**
   * Puts a document in {@link freeSlot} and its passages in free passage slots, storing their vectors in `vectors`;
   * returns the passage slots.
   */
  fill(id: string, doc: IndexedDoc, vectors: VectorStore): number[] {
    const slot = this.#free.pop() ?? this.#ids.length;
    const content: DocContent = { text: doc.text };
    if (doc.metadata !== undefined) content.metadata = doc.metadata;
    const whole = doc.passages.length === 1 && doc.passages[0]!.start === 0 && doc.passages[0]!.end === doc.text.length;
    if (!whole) content.spans = Uint32Array.from(doc.passages.flatMap(({ start, end }) => [start, end]));
    const passages = doc.passages.map(({ vector }) => {
      const passage = this.#freePassages.pop() ?? this.#owners.length;
      this.#owners[passage] = slot;
      vectors.set(passage, vector);
      return passage;
    });
    this.#passageCount += passages.length;
    this.#ids[slot] = id;
    this.#contents[slot] = content;
    this.#passages[slot] = passages;
    this.#slots?.set(id, slot);
    this.#size++;
    this.#contentBytes += contentBytes(id, content);
    return passages;
  }

  /** Frees a document's slot and its passage slots. */
  clear(slot: number): void {
    const id = this.#ids[slot]!;
    const passages = this.#passages[slot]!;
    // A restored content was counted as decoded; its stored bytes stay until the next load.
    const restored = this.#restored[slot] === 1;
    this.#contentBytes -= 2 * id.length +
      (restored ? this.#stored!.decodedBytes(slot) : contentBytes("", this.#contents[slot]!));
    if (restored) this.#restored[slot] = 0;
    for (const passage of passages) {
      this.#owners[passage] = -1;
      this.#freePassages.push(passage);
    }
    this.#passageCount -= passages.length;
    this.#ids[slot] = undefined;
    this.#contents[slot] = undefined;
    this.#passages[slot] = undefined;
    this.#slots?.delete(id);
    this.#size--;
    this.#free.push(slot);
  }

  /** The slot of each id, made from the ids by slot when first asked for. */
  #idMap(): Map<string, number> {
    if (this.#slots === undefined) {
      this.#slots = new Map();
      for (let slot = 0; slot < this.#ids.length; slot++) {
        const id = this.#ids[slot];
        if (id !== undefined) this.#slots.set(id, slot);
      }
    }
    return this.#slots;
  }

  /** The slots that hold a document (and that `keep` keeps, if given), lowest first. */
  *occupiedSlots(keep?: (slot: number) => boolean): Generator<number> {
    for (let slot = 0; slot < this.#ids.length; slot++) {
      if (this.#ids[slot] !== undefined && (keep === undefined || keep(slot))) yield slot;
    }
  }

  /** The passage slots that hold a passage, lowest first. */
  *occupiedPassages(): Generator<number> {
    for (let passage = 0; passage < this.#owners.length; passage++) {
      if (this.#owners[passage] !== -1) yield passage;
    }
  }

  /** The document slots that own `passages`, each once. */
  ownersOf(passages: Iterable<number>): Set<number> {
    const owners = new Set<number>();
    for (const passage of passages) owners.add(this.#owners[passage]!);
    return owners;
  }

  /** The passages of the documents in `slots`: an array, since stepping a generator costs a search more. */
  passagesOf(slots: Iterable<number>): number[] {
    const passages: number[] = [];
    for (const slot of slots) {
      for (const passage of this.#passages[slot]!) passages.push(passage);
    }
    return passages;
  }
}

/** The estimated memory of a document's id, text and metadata (UTF-16 strings, metadata as JSON). */
function contentBytes(id: string, content: DocContent): number {
  const metadata = content.metadata === undefined ? 0 : JSON.stringify(content.metadata).length;
  return 2 * (id.length + content.text.length + metadata) + CONTENT_OBJECT_BYTES + (content.spans?.byteLength ?? 0);
}
