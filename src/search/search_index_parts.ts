/**
 * The parts of an index's search state that a snapshot holds: the slot table's arrays and the vector, text and graph
 * indexes built over them. A search index starts from them, and a snapshot view reads them, without either module
 * importing the other.
 */
import type { AnnIndex } from "./ann_index.ts";
import type { StoredContents } from "./stored_contents.ts";
import type { TextIndex } from "./text_index.ts";
import type { VectorPlan } from "./vector_plan.ts";
import type { VectorStore } from "./vector_store.ts";
import type { SavedCodes } from "../vector_scan/saved_codes.ts";

/** The state a snapshot restores: documents by slot, their passage slots, and the derived indexes built over them. */
export interface SearchIndexParts {
  revision: number;
  ids: (string | undefined)[];
  /** The documents' texts and metadata as the snapshot stored them, decoded when read. */
  stored: StoredContents;
  /** The passage slots of each document slot, in passage order. */
  passages: (number[] | undefined)[];
  vectors: VectorStore;
  text: TextIndex;
  ann?: AnnIndex | undefined;
  /** The graph's codes as an earlier load of the same snapshot saved them (see `SearchIndex.derivedCodes`). */
  codes?: SavedCodes | undefined;
  /** How the graph side finds vector candidates, as last tuned. */
  plan?: VectorPlan | undefined;
}
