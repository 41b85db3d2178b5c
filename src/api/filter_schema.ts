/** The schema of a search's metadata `filter`: parsed once into a predicate, or an issue naming the bad part. */
import { z } from "zod";
import { FilterSyntaxError, parseFilter } from "../search/metadata_filter.ts";

/** A metadata filter, parsed into a predicate; a malformed one is an issue at the bad operator or path. */
export const filterSchema = z.unknown().transform((value, ctx) => {
  try {
    return parseFilter(value);
  } catch (error) {
    if (!(error instanceof FilterSyntaxError)) throw error;
    ctx.addIssue({ code: "custom", path: error.path, message: error.message });
    return z.NEVER;
  }
}).meta({
  type: "object",
  additionalProperties: {},
  description: "A Mongo-style predicate over metadata: $eq, $ne, $gt(e), $lt(e), $in, $nin, $exists, $and, $or",
});
