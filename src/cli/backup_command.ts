/**
 * `cli backup now` and `cli restore <dir>`: one backup of the store at `DENO_KV_PATH` into `BACKUP_DIR`, taken under
 * the same lease as the scheduled ones, and a restore of one into an empty store.
 */
import { backupLeaseMs, backupUnderLease } from "../backup/leased_backup.ts";
import { restoreBackup } from "../backup/restore_backup.ts";
import type { CommandResult } from "./key_command.ts";
import { endProgress, progress } from "./progress_line.ts";

/** The backup commands, one per line. */
export const BACKUP_COMMANDS =
  `  backup now                      write one backup of the store (DENO_KV_PATH) into BACKUP_DIR; prints its
                                  directory
  restore <dir>                   restore a backup into an empty store (DENO_KV_PATH), after checking every
                                  file against its manifest`;

/** How long `backup now` waits while another writer holds the backup lease. */
const LEASE_WAIT_MS = 10 * 60 * 1000;

/** What the backup commands need of the configuration. */
export interface BackupCommandSettings {
  BACKUP_DIR?: string | undefined;
  BACKUP_INTERVAL: number;
  BACKUP_KEEP: number;
}

/** Runs `backup <args>` or `restore <args>` (`command`); progress goes to a terminal, the outcome is returned. */
export async function runBackupCommand(
  kv: Deno.Kv,
  command: "backup" | "restore",
  args: string[],
  settings: BackupCommandSettings,
): Promise<CommandResult> {
  const fail = (message: string): CommandResult => ({ code: 1, stdout: [], stderr: [message] });
  const usage = `Usage:\n${BACKUP_COMMANDS}`;
  try {
    if (command === "backup") {
      if (args.length !== 1 || args[0] !== "now") return fail(usage);
      if (settings.BACKUP_DIR === undefined) return fail("backup now needs BACKUP_DIR, the directory to write into");
      const written = await backupUnderLease(kv, settings.BACKUP_DIR, {
        owner: `cli-${Deno.pid}-${crypto.randomUUID()}`,
        leaseMs: backupLeaseMs(settings.BACKUP_INTERVAL),
        waitForLeaseMs: LEASE_WAIT_MS,
        keep: settings.BACKUP_KEEP,
        onProgress: progress,
      });
      endProgress();
      if (written === null) return fail("Another instance has been writing a backup for 10 minutes; try again later");
      return { code: 0, stdout: [written.path], stderr: [] };
    }
    if (args.length !== 1) return fail(usage);
    const manifest = await restoreBackup(kv, args[0]!, {
      onProgress: (step, done, total) => progress(`${step}: ${done}/${total} entries`),
    });
    endProgress();
    const { counts } = manifest;
    const summary = `Restored ${counts.projects ?? 0} project(s), ${counts.indexes ?? 0} index(es) and ` +
      `${counts.documents ?? 0} document(s) from the backup of ${manifest.createdAt} (quire ${manifest.quireVersion})`;
    return { code: 0, stdout: [summary], stderr: [] };
  } catch (error) {
    endProgress();
    return fail(`${command} failed: ${(error as Error).message}`);
  }
}
