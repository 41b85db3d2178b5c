/** Repeats work at an interval, one run at a time, until stopped. */

/** Runs `work` now and then every `intervalMs` after each run ends; returns the function that stops it. */
export function poll(work, intervalMs) {
  let stopped = false;
  let timer;
  const run = async () => {
    try {
      await work();
    } finally {
      if (!stopped) timer = setTimeout(run, intervalMs);
    }
  };
  run();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** How often views refresh what they show. */
export const REFRESH_MS = 2000;
