/**
 * A backup's `manifest.json`: when it was taken, by which release, of which store layout, how many records of each
 * kind it holds, and the size and SHA-256 of each of its files. A restore checks every file against it first.
 */
import denoConfig from "../../deno.json" with { type: "json" };
import { ApiError } from "../api/api_error.ts";
import { STORE_FORMAT_VERSION } from "../storage/store_format.ts";

/** The layout of a backup directory that this release writes and reads. */
export const BACKUP_FORMAT = "quire-backup-1";

/** The name of the manifest in a backup directory. */
export const MANIFEST_FILE = "manifest.json";

/** A SHA-256 as the manifest writes it: 64 lowercase hex digits. */
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** One file of a backup. */
export interface BackupFile {
  /** Relative to the backup directory. */
  path: string;
  bytes: number;
  sha256: string;
  /** Lines (one stored key and value each). */
  entries: number;
  /** For the file of one index: which index, and its documents. */
  index?: { projectId: string; name: string; id: string; docs: number; deleted: boolean };
}

/** What `manifest.json` holds. */
export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  /** When the copy began, as an ISO time (UTC). */
  createdAt: string;
  /** The quire release that wrote it (`version` of deno.json). */
  quireVersion: string;
  /** The format of the records it holds: the store's format marker (see `STORE_FORMAT_VERSION`). */
  storeFormat: number;
  /** Stored records by kind (the first part of their keys), with `indexes` (live and kept for undo) and `documents`. */
  counts: Record<string, number>;
  files: BackupFile[];
}

/** The quire release of this build. */
export const QUIRE_VERSION: string = denoConfig.version;

/** What a backup holds, for its manifest. */
export interface BackupContents {
  storeFormat: number;
  counts: Record<string, number>;
  files: BackupFile[];
}

/** Builds the manifest of a backup begun at `createdAt`. */
export function buildManifest(createdAt: Date, contents: BackupContents): BackupManifest {
  return { format: BACKUP_FORMAT, createdAt: createdAt.toISOString(), quireVersion: QUIRE_VERSION, ...contents };
}

/**
 * Reads and checks the manifest of the backup in `dir`: a 404 when there is none, a 422 when it is not one this
 * release reads or does not give the SHA-256 and size of each of its files.
 */
export async function readManifest(dir: string): Promise<BackupManifest> {
  let text: string;
  try {
    text = await Deno.readTextFile(`${dir}/${MANIFEST_FILE}`);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new ApiError(404, `No backup in "${dir}": it has no ${MANIFEST_FILE}`, { cause: error });
    }
    throw error;
  }
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(text);
  } catch (error) {
    throw new ApiError(422, `The manifest of the backup in "${dir}" is not JSON`, { cause: error });
  }
  if (manifest?.format !== BACKUP_FORMAT || !Array.isArray(manifest.files)) {
    throw new ApiError(
      422,
      `The backup in "${dir}" has format ${JSON.stringify(manifest?.format)}: expected "${BACKUP_FORMAT}"`,
    );
  }
  if (!(manifest.storeFormat <= STORE_FORMAT_VERSION)) {
    throw new ApiError(
      422,
      `The backup in "${dir}" holds store format ${manifest.storeFormat} (quire ${manifest.quireVersion}); quire ` +
        `${QUIRE_VERSION} reads store format ${STORE_FORMAT_VERSION} and older: restore it with a newer quire`,
    );
  }
  for (const file of manifest.files) {
    if (typeof file?.path !== "string" || file.path.split("/").some((part) => part === ".." || part === "")) {
      throw new ApiError(
        422,
        `The manifest of the backup in "${dir}" names a file outside it: ${JSON.stringify(file?.path)}`,
      );
    }
    // Every release has written both: without them a damaged file could not be told from a whole one.
    if (!SHA256_HEX.test(String(file.sha256)) || !Number.isSafeInteger(file.bytes) || file.bytes < 0) {
      throw new ApiError(
        422,
        `The manifest of the backup in "${dir}" gives no SHA-256 and size of "${file.path}": the file cannot be ` +
          "checked, so the backup is not restored",
      );
    }
  }
  return manifest;
}
