/**
 * quire: self-hostable document indexes behind one authenticated `POST /manage`.
 *
 * Run as a program, `main.ts` serves the API; `main.ts project …` manages projects; `main.ts --help` prints the
 * configuration table. Imported, it gives the service as a handler with no port of its own, to call from tests or
 * to mount in an app's own `Deno.serve`.
 *
 * @example Mounting quire in an app
 * ```ts
 * import { createQuireHandler } from "@quire/server";
 *
 * const quire = await createQuireHandler({
 *   kv: await Deno.openKv("./data/app.kv"),
 *   project: { id: "app", key: "a-long-random-key" },
 * });
 * Deno.serve((request, info) =>
 *   new URL(request.url).pathname === "/manage" ? quire.fetch(request, info) : new Response("app"));
 * ```
 *
 * @module
 */
import { type Config, CONFIG_HELP, configFromEnvOrExit } from "./src/config.ts";
import { openKvStore } from "./src/storage/kv_store.ts";
import { upgradeStoreFormat } from "./src/storage/store_format.ts";
import { BUILT_IN_MODELS, readModelRegistry } from "./src/embedding/model_registry.ts";
import { PROJECT_COMMANDS, runProjectCommand } from "./src/cli/project_command.ts";
import { exportIndexes, importIndexes, TRANSFER_COMMANDS } from "./src/cli/transfer_command.ts";
import { BACKUP_COMMANDS, runBackupCommand } from "./src/cli/backup_command.ts";
import { DEFAULT_PROJECT_ID, ensureDefaultProject, type RunningService, startService } from "./src/server.ts";
import { PROCESS_NUMBER_VARIABLE, runProcessGroup } from "./src/process_group.ts";
import { embedderOf } from "./src/quire_handler.ts";

export {
  createQuireHandler,
  type ProjectCredentials,
  type QuireHandler,
  type QuireHandlerOptions,
} from "./src/quire_handler.ts";
export type { ModelDtype, ModelKind, ModelRegistry, ModelSpec } from "./src/embedding/model_registry.ts";

function printHelp(): void {
  const width = Math.max(...Object.keys(CONFIG_HELP).map((name) => name.length));
  console.log(
    "quire: document indexes behind POST /manage\n\nUsage:\n  main.ts            serve\n  main.ts project …  manage projects\n  main.ts export …   export indexes over HTTP\n  main.ts import …   import them\n  main.ts backup …   back up the whole store into BACKUP_DIR\n  main.ts restore …  restore a backup into an empty store\n",
  );
  console.log(`Project commands:\n${PROJECT_COMMANDS}`);
  console.log(`\nExport and import commands:\n${TRANSFER_COMMANDS}`);
  console.log(`\nBackup and restore commands (the whole store, see docs/operations.md):\n${BACKUP_COMMANDS}`);
  console.log("\nEnvironment variables:");
  for (const [name, help] of Object.entries(CONFIG_HELP)) console.log(`  ${name.padEnd(width)}  ${help}`);
}

function announceDefaultProject(key: string): void {
  console.log(`Created project "${DEFAULT_PROJECT_ID}"; its key is shown only now: ${key}`);
}

/** `PROCESSES` > 1: the default project is made once, here, then the group of server processes runs. */
async function serveGroup(config: Config): Promise<void> {
  const kv = await openKvStore(config.DENO_KV_PATH);
  await ensureDefaultProject(kv, announceDefaultProject);
  kv.close();
  Deno.exit(await runProcessGroup({ count: config.PROCESSES, hostname: config.HOSTNAME, port: config.PORT }));
}

async function serve(config: Config, process: number): Promise<void> {
  const registry = config.MODELS_FILE === undefined ? BUILT_IN_MODELS : await readModelRegistry(config.MODELS_FILE);
  const kv = await openKvStore(config.DENO_KV_PATH);
  // Processes of a group share the cores: each model run gets its share of them.
  const threads = config.PROCESSES > 1
    ? Math.max(1, Math.floor(navigator.hardwareConcurrency / config.PROCESSES))
    : undefined;
  const embedder = embedderOf(registry, config, threads);
  // Listening for signals before the service starts, so that one arriving just as it listens still stops it cleanly.
  const { promise: started, resolve } = Promise.withResolvers<RunningService>();
  const stop = async () => {
    // In-flight requests and background work get a bounded time to finish; the store is closed either way.
    const timeout = new Promise((resolve) => setTimeout(resolve, config.SHUTDOWN_TIMEOUT_MS));
    await Promise.race([started.then((service) => service.shutdown()), timeout]);
    await embedder.dispose();
    kv.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  resolve(
    await startService(kv, embedder, config, {
      onDefaultProject: announceDefaultProject,
      onListen: ({ hostname, port }) => console.log(`quire listening on http://${hostname}:${port}/manage`),
      process,
    }),
  );
}

if (import.meta.main) {
  const [command, ...rest] = Deno.args;
  if (command === "--help" || command === "-h") {
    printHelp();
    Deno.exit(0);
  }
  if (command === "export" || command === "import") {
    const key = Deno.env.get("QUIRE_KEY");
    if (key === undefined) {
      console.error(`${command} needs QUIRE_KEY, the project's key`);
      Deno.exit(2);
    }
    const target = {
      url: Deno.env.get("QUIRE_URL") ?? "http://localhost:8000",
      projectId: Deno.env.get("QUIRE_PROJECT") ?? DEFAULT_PROJECT_ID,
      key,
    };
    try {
      const names = command === "export"
        ? await exportIndexes(target, rest[0], Deno.stdout.writable)
        : await importIndexes(target, rest[0], Deno.stdin.readable);
      console.error(`${command === "export" ? "Exported" : "Imported"} ${names.length} index(es): ${names.join(", ")}`);
      Deno.exit(0);
    } catch (error) {
      console.error(`${command} failed: ${(error as Error).message}`);
      Deno.exit(1);
    }
  }
  const config = configFromEnvOrExit();
  if (command === "project") {
    const kv = await openKvStore(config.DENO_KV_PATH);
    try {
      await upgradeStoreFormat(kv);
    } catch (error) {
      console.error((error as Error).message);
      Deno.exit(1);
    }
    const result = await runProjectCommand(kv, rest);
    kv.close();
    result.stdout.forEach((line) => console.log(line));
    result.stderr.forEach((line) => console.error(line));
    Deno.exit(result.code);
  } else if (command === "backup" || command === "restore") {
    const kv = await openKvStore(config.DENO_KV_PATH);
    const result = await runBackupCommand(kv, command, rest, config);
    kv.close();
    result.stdout.forEach((line) => console.log(line));
    result.stderr.forEach((line) => console.error(line));
    Deno.exit(result.code);
  } else if (command === undefined) {
    const process = Number(Deno.env.get(PROCESS_NUMBER_VARIABLE) ?? 0);
    try {
      if (config.PROCESSES > 1 && process === 0) await serveGroup(config);
      else await serve(config, Math.max(process, 1));
    } catch (error) {
      console.error(`Cannot start: ${(error as Error).message}`);
      Deno.exit(1);
    }
  } else {
    console.error(`Unknown command "${command}"; see --help`);
    Deno.exit(2);
  }
}
