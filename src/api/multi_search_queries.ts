/**
 * The queries of a `multiSearch`, each validated on its own as a `search` request, so that an invalid query fails
 * only its own slot; its error names the field as `queries[i].field`.
 */
import { z } from "zod";
import { ApiError } from "./api_error.ts";
import { describeIssue } from "./describe_issue.ts";
import { type Limits, type RequestOf, requestSchema } from "./request_schemas.ts";

/** The request schema of each set of limits, built once: a service has one. */
const schemas = new WeakMap<Limits, ReturnType<typeof requestSchema>>();

/** Validates `query` (the `position`th of a `multiSearch` of `projectId`) as a `search`; 400 naming its field. */
export function parseSearchQuery(
  limits: Limits,
  query: Record<string, unknown>,
  place: { projectId: string; position: number },
): RequestOf<"search"> {
  let schema = schemas.get(limits);
  if (schema === undefined) schemas.set(limits, schema = requestSchema(limits));
  const parsed = schema.safeParse({ ...query, action: "search", projectId: place.projectId });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ ...issue, path: ["queries", place.position, ...issue.path] }));
    throw new ApiError(400, describeIssue(new z.ZodError(issues)));
  }
  return parsed.data as RequestOf<"search">;
}
