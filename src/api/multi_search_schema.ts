/**
 * The request of `multiSearch`: several searches in one body, answered in order or merged into one list
 * (`federation`). Each query is validated on its own when it runs (`multi_search_queries.ts`), so that one bad query
 * fails only its own slot; the envelope is checked here.
 */
import { z } from "zod";

/** The most searches one `multiSearch` holds. */
export const MAX_MULTI_SEARCH_QUERIES = 20;

/** The deepest `federation.offset`: every query ranks `offset + limit` hits for the merge. */
export const MAX_FEDERATION_OFFSET = 1_000;

/** The most hits a federated page holds, as for one search. */
export const MAX_FEDERATION_LIMIT = 100;

/** One query: any JSON object here, validated as the fields of a `search` when it runs. */
const querySchema = z.custom<Record<string, unknown>>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  { message: "expected a JSON object: the fields of a search" },
).meta({
  type: "object",
  properties: { indexName: { type: "string", description: "The index or alias to search" } },
  required: ["indexName"],
  additionalProperties: {},
  description: 'The fields of a search request (SearchRequest) without "action" and "projectId"; validated one by ' +
    "one, so that an invalid query gives its own error in its slot",
});

/** The schema of a `multiSearch` body, with the project field of every request (`base`). */
export function multiSearchSchema<P extends z.ZodType<string>>(base: { projectId: P }) {
  return z.object({
    action: z.literal("multiSearch"),
    ...base,
    queries: z.array(querySchema).min(1, { message: "must hold at least one query" }).max(
      MAX_MULTI_SEARCH_QUERIES,
      { message: `must hold at most ${MAX_MULTI_SEARCH_QUERIES} queries` },
    ).describe(`1 to ${MAX_MULTI_SEARCH_QUERIES} searches, answered in this order`),
    federation: z.object({
      limit: z.number().int().min(1).max(MAX_FEDERATION_LIMIT).optional().describe("Hits per page (default 10)"),
      offset: z.number().int().min(0).max(MAX_FEDERATION_OFFSET).optional().describe("Hits to skip (default 0)"),
    }).optional().describe(
      "Answers one merged page of every query's hits instead, each hit naming its indexName; scores are each " +
        "query's divided by its best hit's",
    ),
  });
}
