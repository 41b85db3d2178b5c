/** Indexes and documents per project, counted from the records in Deno KV when metrics are scraped. */
import { listIndexRecords } from "../storage/index_records.ts";
import { listProjects } from "../storage/project_records.ts";

/** One project's indexes and the documents in them. */
export interface ProjectTotals {
  indexes: number;
  docs: number;
}

/** Every project's totals, in project id order; a project without indexes shows zeros. */
export async function readProjectTotals(kv: Deno.Kv): Promise<Map<string, ProjectTotals>> {
  const totals = new Map<string, ProjectTotals>();
  for (const project of await listProjects(kv)) totals.set(project.id, { indexes: 0, docs: 0 });
  for await (const value of listIndexRecords(kv)) {
    const project = totals.get(value.projectId);
    // The two listings are not one snapshot: an index of a project that came or went in between is skipped.
    if (project === undefined) continue;
    project.indexes++;
    project.docs += value.docCount;
  }
  return totals;
}
