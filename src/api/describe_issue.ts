/** The one message of a failed request validation: its first problem, naming the field and element. */
import type { z } from "zod";

/** Describes the first problem of a failed parse as one message, naming the field and element. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0]!;
  const path = issue.path.reduce<string>(
    (text, part) =>
      typeof part === "number" ? `${text}[${part}]` : text === "" ? String(part) : `${text}.${String(part)}`,
    "",
  );
  if (issue.code === "invalid_type" && issue.message.endsWith("received undefined")) {
    return `Missing required field "${path}": ${issue.message.replace(/^Invalid input: /, "")}`;
  }
  return `Invalid "${path}": ${issue.message.replace(/^Invalid input: /, "")}`;
}
