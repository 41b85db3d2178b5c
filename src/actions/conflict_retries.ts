/** Optimistic writes: read, compute, commit with a check, and try again when another writer got there first. */
import { ApiError } from "../http/api_error.ts";

/** Attempts before a write gives up; conflicts only come from other processes sharing the store. */
const MAX_ATTEMPTS = 8;

/**
 * Runs `attempt` until it returns a value; `undefined` means its commit lost a race. After the last attempt it throws
 * 409 for the index.
 */
export async function retryOnConflict<T>(indexName: string, attempt: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < MAX_ATTEMPTS; i++) {
    const result = await attempt();
    if (result !== undefined) return result;
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * (i + 1)));
  }
  throw new ApiError(409, `Index "${indexName}" is being changed by other writers: retry the request`);
}
