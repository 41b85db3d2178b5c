/** Recognises a store that is busy, not broken: SQLite's lock held by another process sharing the same file. */

/** Whether `error` says that another process holds the store's lock, so that trying again may succeed. */
export function isStoreBusy(error: unknown): boolean {
  return error instanceof Error && /database is (locked|busy)/i.test(error.message);
}
