/**
 * Rebuilds an index from an export: without embedding when the export's model and version are the ones the server
 * runs, by embedding the texts again otherwise. The documents are written under a fresh index id that nothing points
 * to, and the index record appears in one commit at the end, so that a bad line leaves nothing behind.
 */
import { z } from "zod";
import { DEFAULT_LANGUAGE, LANGUAGES } from "../fulltext/languages.ts";
import type { ServiceContext } from "../context.ts";
import { ApiError } from "../api/api_error.ts";
import { indexExists } from "../api/index_errors.ts";
import type { DocInput } from "../api/request_schemas.ts";
import { isExternalModel, type ModelSpec } from "../embedding/model_registry.ts";
import { passageTotal } from "../storage/doc_records.ts";
import type { StoredDoc } from "../storage/doc_change_codec.ts";
import {
  abandonBuild,
  type IndexRecord,
  publishBuiltIndex,
  readIndexRecord,
  startBuild,
  writeBuiltDocs,
} from "../storage/index_records.ts";
import { indexKey } from "../storage/kv_keys.ts";
import { StoredDocBuilder } from "../writes/stored_docs.ts";
import { checkedPassageSettings, indexEmbedding } from "../writes/index_embedding.ts";
import { decodeVector } from "../util/vector_base64.ts";
import { settingsInputSchema } from "../api/settings_schemas.ts";
import { writeSettingsVersion } from "../storage/settings_records.ts";

/** One parsed line of the body. */
export interface ImportLine {
  number: number;
  value: unknown;
}

/** Where an import goes. */
export interface ImportTarget {
  projectId: string;
  indexName: string;
}

/** Documents written per commit. */
const BATCH_DOCS = 64;

function headerSchema(maxDocIdBytes: number) {
  return z.object({
    quire: z.literal("index"),
    format: z.literal(1),
    model: z.object({ id: z.string(), version: z.string() }),
    passages: z.object({ maxTokens: z.number().int(), overlapTokens: z.number().int() }).optional(),
    language: z.enum(LANGUAGES as [string, ...string[]]).optional(),
    settings: settingsInputSchema(maxDocIdBytes).optional(),
  });
}

const docSchema = z.object({
  id: z.string().min(1),
  text: z.string(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  passages: z.array(z.object({ start: z.number().int().min(0), end: z.number().int().min(0), vector: z.string() }))
    .min(1),
});

/**
 * Imports the export in `lines` (its header first) as a new index; 409 when the name is taken, 400 naming the line
 * of the first malformed one, and then nothing is created.
 */
export async function importIndex(
  ctx: ServiceContext,
  target: ImportTarget,
  lines: AsyncIterable<ImportLine>,
): Promise<IndexRecord> {
  const iterator = lines[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) throw new ApiError(400, "The export is empty: its first line must be the index's settings");
  const header = parseLine(headerSchema(ctx.limits.maxDocIdBytes), first.value, "the index's settings");
  const spec = ctx.embedder.spec(header.model.id);
  if (spec === undefined) throw new ApiError(400, `Line ${first.value.number}: unknown model "${header.model.id}"`);
  const reuse = spec.version === header.model.version;
  if (!reuse && isExternalModel(spec)) {
    throw new ApiError(
      400,
      `Line ${first.value.number}: the export holds version "${header.model.version}" of external model ` +
        `"${header.model.id}", and this server has version "${spec.version}": quire cannot compute its vectors`,
    );
  }
  if (await readIndexRecord(ctx.kv, target.projectId, target.indexName) !== null) throw indexExists(target.indexName);
  const now = new Date().toISOString();
  const record: IndexRecord = {
    id: crypto.randomUUID(),
    projectId: target.projectId,
    name: target.indexName,
    modelId: header.model.id,
    modelVersion: spec.version,
    revision: 1,
    docCount: 0,
    passageCount: 0,
    language: header.language ?? DEFAULT_LANGUAGE,
    createdAt: now,
    updatedAt: now,
  };
  if (header.passages !== undefined && !isExternalModel(spec)) {
    record.passages = await checkedPassageSettings(ctx, record.modelId, header.passages);
  }
  await startBuild(ctx.kv, record.id);
  try {
    await writeDocs(ctx, record, { spec, reuse }, iterator);
    const { synonyms = [], pins = [] } = header.settings ?? {};
    if (synonyms.length > 0 || pins.length > 0) {
      record.settings = await writeSettingsVersion(ctx.kv, record.id, { synonyms, pins });
    }
    if (!await publishBuiltIndex(ctx.kv, record)) throw indexExists(target.indexName);
  } catch (error) {
    await abandonBuild(ctx.kv, record.id);
    throw error;
  }
  ctx.records.invalidate(indexKey(record.projectId, record.name));
  ctx.indexStates.noteCreated(record);
  return record;
}

/** Writes the documents of the remaining lines under the record's id, counting them into the record. */
async function writeDocs(
  ctx: ServiceContext,
  record: IndexRecord,
  model: { spec: ModelSpec; reuse: boolean },
  lines: AsyncIterator<ImportLine>,
): Promise<void> {
  const builder = model.reuse ? undefined : new StoredDocBuilder(ctx, await indexEmbedding(ctx, record));
  const seen = new Set<string>();
  let dimensions = model.spec.dimensions;
  let batch: [string, StoredDoc | DocInput][] = [];
  const flush = async () => {
    const inputs = batch.map(([, doc]) => doc).filter((doc): doc is DocInput => !("passages" in doc));
    const built = builder === undefined ? [] : await builder.build(inputs);
    const stored = batch.map(([, doc]) => "passages" in doc ? doc : built.shift()!);
    await writeBuiltDocs(ctx.kv, record.id, batch.map(([id], i) => ({ id, doc: stored[i]!, previousParts: 0 })));
    record.docCount += batch.length;
    record.passageCount! += passageTotal(stored);
    batch = [];
  };
  for (let next = await lines.next(); !next.done; next = await lines.next()) {
    const line = next.value;
    const doc = parseLine(docSchema, line, "a document");
    if (seen.has(doc.id)) throw new ApiError(400, `Line ${line.number}: duplicate document id "${doc.id}"`);
    seen.add(doc.id);
    const input: DocInput = doc.metadata === undefined
      ? { id: doc.id, text: doc.text }
      : { id: doc.id, text: doc.text, metadata: doc.metadata };
    if (!model.reuse) {
      batch.push([doc.id, input]);
    } else {
      const passages = doc.passages.map(({ start, end, vector }) => {
        const decoded = decodeVector(vector);
        dimensions ??= decoded?.length;
        if (decoded === undefined || decoded.length !== dimensions) {
          throw new ApiError(
            400,
            `Line ${line.number}: a passage vector is not base64 of ${dimensions} float32 values`,
          );
        }
        if (start > end || end > doc.text.length) {
          throw new ApiError(400, `Line ${line.number}: a passage span [${start}, ${end}) lies outside the text`);
        }
        return { start, end, vector: decoded };
      });
      batch.push([doc.id, { ...input, passages }]);
    }
    if (batch.length === BATCH_DOCS) await flush();
  }
  if (batch.length > 0) await flush();
}

function parseLine<T>(schema: z.ZodType<T>, line: ImportLine, what: string): T {
  const parsed = schema.safeParse(line.value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.join(".");
  throw new ApiError(400, `Line ${line.number} is not ${what}: ${path === "" ? "" : `"${path}" `}${issue.message}`);
}
