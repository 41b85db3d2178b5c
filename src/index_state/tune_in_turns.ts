/**
 * Runs the tuning of how an index finds vector candidates one measured search per turn of the event loop, so that
 * requests are answered in between.
 */
import type { SearchIndex } from "../search/search_index.ts";
import { TimeSlices } from "../util/time_slices.ts";
import { tuningWaitsForGraph } from "./graph_inserts.ts";

/**
 * Tunes how the index finds vector candidates, if that is due (and not held back until its graph is filled, see
 * {@link tuningWaitsForGraph}), one measured search per turn of the event loop.
 */
export async function tuneWhenDue(index: SearchIndex): Promise<void> {
  if (tuningWaitsForGraph(index)) return;
  const tuning = index.vectorTuning();
  if (tuning !== undefined) await tuneInTurns(tuning, () => true);
}

/** Runs a tuning's steps one per turn of the event loop (see {@link TimeSlices}), while `wanted` says so. */
export async function tuneInTurns(steps: Generator<void>, wanted: () => boolean): Promise<void> {
  const turns = new TimeSlices(0);
  do {
    await turns.next();
    if (!wanted()) {
      steps.return(undefined);
      return;
    }
  } while (!steps.next().done);
}
