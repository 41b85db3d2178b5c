/** `cli project …`: manage projects and their keys; a running server sees a change within METADATA_CACHE_MS. */
import { createProject, rotateProjectKey } from "../projects/project_store.ts";
import { deleteProject, listProjects } from "../storage/project_records.ts";
import { type CommandResult, KEY_COMMANDS, runKeyCommand } from "./key_command.ts";

/** The project commands, one per line. */
export const PROJECT_COMMANDS = `  project create <projectId>      create a project; prints {"projectId","key"} once
  project list                    list projects (ids and creation times, never keys)
  project rotate-key <projectId>  replace a project's key; a running server refuses the old one within
                                  METADATA_CACHE_MS
  project delete <projectId>      delete a project, its keys and all its indexes
${KEY_COMMANDS}`;

/** The usage text of the project commands. */
export const PROJECT_USAGE = `Usage:\n${PROJECT_COMMANDS}`;

export type { CommandResult };

/** Runs `project <args>`; writes nothing itself, so that tests can read what it would print. */
export async function runProjectCommand(kv: Deno.Kv, args: string[]): Promise<CommandResult> {
  if (args[0] === "key") return await runKeyCommand(kv, args.slice(1));
  const [verb, projectId, ...extra] = args;
  const ok = (...stdout: string[]): CommandResult => ({ code: 0, stdout, stderr: [] });
  const fail = (message: string): CommandResult => ({ code: 1, stdout: [], stderr: [message] });
  const needsId = verb === "create" || verb === "rotate-key" || verb === "delete";
  if (needsId && (projectId === undefined || extra.length > 0)) return fail(PROJECT_USAGE);
  switch (verb) {
    case "create": {
      let key: string | null;
      try {
        key = await createProject(kv, projectId!);
      } catch (error) {
        if (error instanceof RangeError) return fail(error.message);
        throw error;
      }
      if (key === null) return fail(`Project "${projectId}" already exists`);
      return ok(JSON.stringify({ projectId, key }));
    }
    case "list":
      if (projectId !== undefined) return fail(PROJECT_USAGE);
      return ok(...(await listProjects(kv)).map(({ id, createdAt }) => JSON.stringify({ projectId: id, createdAt })));
    case "rotate-key": {
      const key = await rotateProjectKey(kv, projectId!);
      if (key === null) return fail(`Project "${projectId}" not found`);
      return ok(JSON.stringify({ projectId, key }));
    }
    case "delete":
      if (!await deleteProject(kv, projectId!)) return fail(`Project "${projectId}" not found`);
      return ok(JSON.stringify({ projectId, deleted: true }));
    default:
      return fail(PROJECT_USAGE);
  }
}
