/** `exportIndex`: the whole index as JSON Lines, streamed as the client reads, for backups and moves. */
import { DEFAULT_LANGUAGE } from "../fulltext/languages.ts";
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { ActionReply } from "../api/action_reply.ts";
import { indexNotFound } from "../api/index_errors.ts";
import { listDocs } from "../storage/doc_records.ts";
import { readSettledIndex } from "../storage/index_records.ts";
import { exportedDoc, type ExportHeader } from "../transfer/export_format.ts";

/**
 * Streams the index's settings, then its documents in id order with their passages' vectors; 404 if unknown. Memory
 * stays bounded: documents are read as the client reads. Writes that land during an export may or may not be in it.
 */
export async function exportIndex(ctx: ServiceContext, request: RequestOf<"exportIndex">): Promise<ActionReply> {
  const entry = await readSettledIndex(ctx.kv, request.projectId, request.indexName);
  if (entry.value === null) throw indexNotFound(request.indexName);
  const record = entry.value;
  const header: ExportHeader = {
    quire: "index",
    format: 1,
    name: record.name,
    model: { id: record.modelId, version: record.modelVersion },
    language: record.language ?? DEFAULT_LANGUAGE,
    docCount: record.docCount,
    passageCount: record.passageCount ?? record.docCount,
    exportedAt: new Date().toISOString(),
  };
  if (record.passages !== undefined) header.passages = record.passages;
  if (record.settings !== undefined) header.settings = (await ctx.settings.of(record)).settings;
  async function* lines(): AsyncGenerator<unknown> {
    yield header;
    for await (const [id, doc] of listDocs(ctx.kv, record.id)) yield exportedDoc(id, doc);
  }
  return ActionReply.jsonLines(lines());
}
