/** Bounds the requests one project has in flight, so that one busy tenant gets 429s instead of an unbounded queue. */
import { ApiError } from "../api/api_error.ts";

/** Counts in-flight requests per project. */
export class ProjectLimiter {
  readonly #limit: number;
  readonly #inFlight = new Map<string, number>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Admits a request of `projectId` and returns its release, or throws 429 with `Retry-After`. */
  admit(projectId: string): () => void {
    const count = this.#inFlight.get(projectId) ?? 0;
    if (count >= this.#limit) {
      throw new ApiError(429, `Project "${projectId}" has ${count} requests in flight, the limit: retry shortly`, {
        headers: { "retry-after": "1" },
      });
    }
    this.#inFlight.set(projectId, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.#inFlight.get(projectId)! - 1;
      if (left === 0) this.#inFlight.delete(projectId);
      else this.#inFlight.set(projectId, left);
    };
  }
}
