/**
 * Who writes the store's next backup, and when the last one was tried and written: a lease that one instance takes at
 * a time, and a state record that every instance reads, so that several instances write one backup per interval.
 */
import { backupLeaseKey, backupStateKey } from "./kv_keys.ts";
import { whileBusy } from "./store_busy.ts";

/** The instance that may write the next backup, until when (milliseconds since the epoch). */
export interface BackupLease {
  owner: string;
  until: number;
}

/** The last backup tried (by any instance or the CLI), and the last one written whole. */
export interface BackupState {
  /** When the last backup began, written or not; the next is due an interval after it. */
  attemptedAt: number;
  /** When the last backup that was written whole began, and its directory's name. */
  succeededAt?: number;
  name?: string;
  /** Why the last try failed, when it did. */
  error?: string;
}

/** Reads the backup state; null before the first backup. */
export async function readBackupState(kv: Deno.Kv): Promise<BackupState | null> {
  return (await whileBusy(() => kv.get<BackupState>(backupStateKey()))).value;
}

/**
 * Takes the backup lease for `ms` unless another owner holds one that has not expired; returns the lease entry, to
 * renew and release, or null.
 */
export async function takeBackupLease(
  kv: Deno.Kv,
  owner: string,
  options: { ms: number; now?: number },
): Promise<Deno.KvEntry<BackupLease> | null> {
  return await whileBusy(async () => {
    const now = options.now ?? Date.now();
    const current = await kv.get<BackupLease>(backupLeaseKey());
    if (current.value !== null && current.value.owner !== owner && current.value.until > now) return null;
    const lease: BackupLease = { owner, until: now + options.ms };
    const result = await kv.atomic().check(current).set(backupLeaseKey(), lease).commit();
    return result.ok ? { key: backupLeaseKey(), value: lease, versionstamp: result.versionstamp } : null;
  });
}

/** Extends a lease that is still `current` by `ms` from now; null when it was lost (expired and taken). */
export async function renewBackupLease(
  kv: Deno.Kv,
  current: Deno.KvEntry<BackupLease>,
  ms: number,
): Promise<Deno.KvEntry<BackupLease> | null> {
  const lease: BackupLease = { owner: current.value.owner, until: Date.now() + ms };
  const result = await whileBusy(() => kv.atomic().check(current).set(current.key, lease).commit());
  return result.ok ? { key: current.key, value: lease, versionstamp: result.versionstamp } : null;
}

/**
 * Records the outcome of a backup and releases its lease in one commit, if the lease is still `current`; false when
 * it was lost meanwhile. A failed try keeps the last success it knew of.
 */
export async function finishBackup(
  kv: Deno.Kv,
  current: Deno.KvEntry<BackupLease>,
  state: BackupState,
): Promise<boolean> {
  return await whileBusy(async () => {
    const previous = await kv.get<BackupState>(backupStateKey());
    const next: BackupState = state.succeededAt === undefined && previous.value?.succeededAt !== undefined
      ? { ...state, succeededAt: previous.value.succeededAt, name: previous.value.name! }
      : state;
    const result = await kv.atomic().check(current, previous).delete(current.key).set(backupStateKey(), next).commit();
    return result.ok;
  });
}

/** Gives up a lease that is still `current`, recording nothing: e.g. a backup that was not due after all. */
export async function releaseBackupLease(kv: Deno.Kv, current: Deno.KvEntry<BackupLease>): Promise<void> {
  await whileBusy(() => kv.atomic().check(current).delete(current.key).commit());
}
