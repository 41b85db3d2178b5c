/** Recognises a store that is busy, not broken: SQLite's lock held by another process sharing the same file. */

/** Whether `error` says that another process holds the store's lock, so that trying again may succeed. */
export function isStoreBusy(error: unknown): boolean {
  return error instanceof Error && /database is (locked|busy)/i.test(error.message);
}

/** Tries `work` again, a few milliseconds later each time, while the store is busy; at most `attempts` times. */
export async function whileBusy<T>(work: () => Promise<T>, attempts = 8): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isStoreBusy(error) || attempt === attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
    }
  }
}
