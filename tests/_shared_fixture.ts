/** Tests of one file that share one fixture (a server, say), so that it starts once for all of them. */

/** Declares a test that runs with the shared fixture. */
export type SharedTest<T> = (name: string, fn: (fixture: T, t: Deno.TestContext) => Promise<void>) => void;

/**
 * A `Deno.test` for tests that share the fixture `start` makes on first use. The fixture outlives each test, so they
 * turn the resource and op sanitizers off; the last test to finish closes it with `close`.
 */
export function sharedFixture<T>(start: () => Promise<T>, close: (fixture: T) => Promise<unknown>): SharedTest<T> {
  let shared: Promise<T> | undefined;
  let unfinished = 0;
  return (name, fn) => {
    unfinished++;
    Deno.test({
      name,
      sanitizeResources: false,
      sanitizeOps: false,
      async fn(t) {
        try {
          await fn(await (shared ??= start()), t);
        } finally {
          if (--unfinished === 0) await shared?.then(close, () => {});
        }
      },
    });
  };
}
