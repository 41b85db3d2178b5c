/** `cli project key …`: scoped keys of a project, made in the store as the project key would make them. */
import { ApiError } from "../api/api_error.ts";
import { LATEST_EXPIRY_MS } from "../api/key_schemas.ts";
import { GRANTABLE_ACTIONS, type KeyScope } from "../keys/key_scope.ts";
import { createApiKey } from "../keys/create_api_key.ts";
import { deleteApiKey, listApiKeys, readApiKeyUses } from "../storage/api_key_records.ts";
import { getProject } from "../storage/project_records.ts";

/** The key commands, one per line. */
export const KEY_COMMANDS = `  project key create <projectId> [--description TEXT] [--actions a,b] [--indexes x,y-*]
                         [--expires-at ISO-TIME] [--requests-per-minute N]
                                  create a scoped key; prints it with its secret, once
  project key list <projectId>    list a project's keys and their last use, never secrets
  project key delete <projectId> <keyId>
                                  delete a key; a running server refuses it within METADATA_CACHE_MS`;

/** What a command printed, and its exit code. */
export interface CommandResult {
  code: number;
  stdout: string[];
  stderr: string[];
}

const OPTIONS = ["--description", "--actions", "--indexes", "--expires-at", "--requests-per-minute"];

/** Runs `project key <args>`; writes nothing itself, so that tests can read what it would print. */
export async function runKeyCommand(kv: Deno.Kv, args: string[]): Promise<CommandResult> {
  const [verb, projectId, ...rest] = args;
  const ok = (...stdout: string[]): CommandResult => ({ code: 0, stdout, stderr: [] });
  const fail = (message: string): CommandResult => ({ code: 1, stdout: [], stderr: [message] });
  const usage = `Usage:\n${KEY_COMMANDS}`;
  if (projectId === undefined) return fail(usage);
  if (await getProject(kv, projectId) === null) return fail(`Project "${projectId}" not found`);
  switch (verb) {
    case "create": {
      const options = optionsOf(rest);
      if (typeof options === "string") return fail(`${options}\n${usage}`);
      const scope = scopeOf(options);
      if (typeof scope === "string") return fail(scope);
      try {
        const { record, key } = await createApiKey(kv, projectId, { scope, description: options.description ?? "" });
        const { keyHash: _hash, projectId: _project, id, ...shown } = record;
        return ok(JSON.stringify({ keyId: id, ...shown, key }));
      } catch (error) {
        if (error instanceof ApiError) return fail(error.message);
        throw error;
      }
    }
    case "list": {
      if (rest.length > 0) return fail(usage);
      const uses = await readApiKeyUses(kv, projectId);
      return ok(
        ...(await listApiKeys(kv, projectId)).map(({ keyHash: _hash, projectId: _project, id, ...shown }) =>
          JSON.stringify({ keyId: id, ...shown, lastUsedAt: uses.get(id) ?? null })
        ),
      );
    }
    case "delete": {
      const [keyId, ...extra] = rest;
      if (keyId === undefined || extra.length > 0) return fail(usage);
      if (!await deleteApiKey(kv, projectId, keyId)) return fail(`Key "${keyId}" not found in project "${projectId}"`);
      return ok(JSON.stringify({ projectId, keyId, deleted: true }));
    }
    default:
      return fail(usage);
  }
}

/** `--name value` pairs, or a message naming the first that is unknown or has no value. */
function optionsOf(args: string[]): Record<string, string> | string {
  const options: Record<string, string> = {};
  for (let i = 0; i < args.length; i += 2) {
    const [name, value] = [args[i]!, args[i + 1]];
    if (!OPTIONS.includes(name)) return `Unknown option "${name}"`;
    if (value === undefined) return `Option "${name}" needs a value`;
    options[name.slice(2)] = value;
  }
  return options;
}

/** The scope the options give, or a message naming what is invalid. */
function scopeOf(options: Record<string, string>): KeyScope | string {
  const list = (value: string | undefined) =>
    value?.split(",").map((item) => item.trim()).filter((item) => item !== "") ?? ["*"];
  const actions = list(options.actions);
  const unknown = actions.find((action) => action !== "*" && !GRANTABLE_ACTIONS.includes(action));
  if (unknown !== undefined) return `Unknown action "${unknown}": use "*" or ${GRANTABLE_ACTIONS.join(", ")}`;
  const expires = options["expires-at"];
  if (expires !== undefined && !(Date.parse(expires) <= LATEST_EXPIRY_MS)) {
    return `Invalid --expires-at "${expires}": expected an ISO 8601 time no later than the year 9999`;
  }
  const rate = options["requests-per-minute"];
  if (rate !== undefined && !/^[1-9]\d{0,6}$/.test(rate)) return `Invalid --requests-per-minute "${rate}"`;
  return {
    actions,
    indexes: list(options.indexes),
    expiresAt: expires === undefined ? null : new Date(expires).toISOString(),
    requestsPerMinute: rate === undefined ? null : Number(rate),
  };
}
