/** Runs the LanceDB peer (`lancedb_peer.ts`) in its own process and configuration, and returns its timings. */

/** The peer's workload: the corpus vectors, the 10-document batches with their vectors, and the query vectors. */
export interface PeerWorkload {
  ids: string[];
  vectors: Float32Array[];
  batches: { id: string }[][];
  batchVectors: Float32Array[][];
  queries: Float32Array[];
  /** Probes and refinement to search the ANN index with, besides LanceDB's defaults. */
  searchSettings?: PeerSearchSetting[];
}

/** How LanceDB searches its IVF_PQ index: partitions probed, and candidates re-scored exactly per result wanted. */
export interface PeerSearchSetting {
  nprobes: number;
  refineFactor: number;
}

/** Timings in milliseconds of one phase's operations, and the ids each search found. */
export interface PeerPhase {
  upsert: number[];
  delete: number[];
  search: number[];
  found: string[][];
}

/**
 * The peer's timings in milliseconds: `flat` before its ANN index (its default settings), `indexed` with the index
 * built and searched by default, and a search per extra setting.
 */
export interface PeerTimings {
  setup: string;
  load: number;
  indexing: number;
  flat: PeerPhase;
  indexed: PeerPhase;
  settings: (PeerSearchSetting & Pick<PeerPhase, "search" | "found">)[];
}

/** Writes the workload into `dir`, runs the peer on it and returns its timings. */
export async function runPeer(dir: string, workload: PeerWorkload): Promise<PeerTimings> {
  const all = [...workload.vectors, ...workload.batchVectors.flat(), ...workload.queries];
  const dims = all[0]!.length;
  const floats = new Float32Array(all.length * dims);
  all.forEach((vector, i) => floats.set(vector, i * dims));
  await Deno.writeFile(`${dir}/peer.f32`, new Uint8Array(floats.buffer));
  await Deno.writeTextFile(
    `${dir}/peer.json`,
    JSON.stringify({
      dims,
      ids: workload.ids,
      batches: workload.batches.map((batch) => batch.map((doc) => doc.id)),
      queries: workload.queries.length,
      searchSettings: workload.searchSettings ?? [],
    }),
  );
  const here = new URL(".", import.meta.url).pathname;
  const { code, stdout } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "--config", `${here}deno.json`, `${here}lancedb_peer.ts`, dir],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (code !== 0) throw new Error(`The LanceDB peer exited with ${code}`);
  const lines = new TextDecoder().decode(stdout).trim().split("\n");
  const result = JSON.parse(lines.at(-1)!);
  return {
    ...result,
    setup: `LanceDB ${workload.ids.length} rows loaded in ${(result.load / 1000).toFixed(1)} s, ` +
      `vector index (IVF_PQ, its default) built in ${(result.indexing / 1000).toFixed(1)} s`,
  };
}
