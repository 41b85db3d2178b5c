/** Long synchronous work split into short slices, so that the event loop answers requests in between. */
import { setImmediate } from "node:timers";

/**
 * Resolves on a later turn of the event loop, once the I/O that is due has been handled. `setImmediate`, since a
 * `setTimeout(0)` turn takes at least about 2 ms even when nothing else runs.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * While requests keep the event loop busy, background work takes at most this share of the time, unless it asks for
 * less. A request takes several turns (its body, its store reads, its search), and a slice of background work before
 * each adds up: with a batch of graph inserts in every turn, searches after a restart took several times as long as
 * once the graph had caught up.
 */
const BACKGROUND_SHARE = 0.25;
/** A turn that takes longer than this ran other work: the event loop is busy. */
const BUSY_TURN_MS = 2;

/** Requests and jobs under way, and how many of them wait for background work to bring something about. */
let underWay = 0;
let waitingForBackground = 0;
/** When the last request or job started or ended. */
let lastForeground = -Infinity;

/**
 * Runs `work` (a request, a job) as foreground work, which background work yields to. Work that waits on the store
 * leaves the event loop idle, so its turns look free: a bulk load's document reads, one `getMany` of 10 keys per turn,
 * would each wait for a batch of graph inserts, and a large write's reads would take many times as long as the reads
 * themselves.
 */
export async function asForeground<T>(work: () => T | Promise<T>): Promise<T> {
  underWay++;
  lastForeground = performance.now();
  try {
    return await work();
  } finally {
    underWay--;
    lastForeground = performance.now();
  }
}

/** Waits, within foreground work, for something that background work brings about, without holding that work back. */
export async function awaitBackground<T>(done: Promise<T>): Promise<T> {
  waitingForBackground++;
  try {
    return await done;
  } finally {
    waitingForBackground--;
  }
}

/**
 * Background work's turn, after it has run for `workMs`: lets the event loop run, and when other work filled that turn
 * or foreground work is under way, waits on so that the background work takes at most `share` of the time.
 */
async function backgroundTurn(workMs: number, share: number): Promise<void> {
  const busy = await turnFilled() || underWay > waitingForBackground;
  if (busy) await delay(workMs * (1 / share - 1));
}

/** Lets the event loop run one turn; resolves to whether other work filled it. */
async function turnFilled(): Promise<boolean> {
  const turn = performance.now();
  await nextTurn();
  return performance.now() - turn > BUSY_TURN_MS;
}

/**
 * The process is idle once no request or job has started or ended for this long: clients that search one after another
 * leave short gaps with none under way, which must not count as idle.
 */
const IDLE_AFTER_MS = 100;
/** How long work that runs only while the process is idle waits before it looks again. */
const IDLE_POLL_MS = 20;

/**
 * A turn of the event loop that no other work filled, in an idle process (or one whose foreground work all waits for
 * background work): for background work that nothing waits for while requests keep the process busy.
 */
async function idleTurn(giveUp: () => boolean): Promise<void> {
  for (;;) {
    if (giveUp()) return;
    const filled = await turnFilled();
    const quiet = underWay === 0
      ? performance.now() - lastForeground >= IDLE_AFTER_MS
      : underWay <= waitingForBackground;
    if (quiet && !filled) return;
    await delay(IDLE_POLL_MS);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Where long work checks {@link due} between its steps, and awaits {@link next} when it is. */
export interface Slices {
  /** Whether the current slice is over. */
  readonly due: boolean;
  /**
   * Lets other work run, then starts a new slice; with `whenIdle`, only once nothing else runs, or once `giveUp` says
   * the work is no longer wanted.
   */
  next(options?: { whenIdle?: boolean; giveUp?: () => boolean }): Promise<void>;
}

/**
 * Slices of about `ms` each, after which the event loop gets a turn; with 0, work that awaits {@link next} after each
 * of its steps (a batch, a commit) gets a turn after every one. While the process is busy, the slices take at most
 * `share` of the time.
 */
export class TimeSlices implements Slices {
  readonly #ms: number;
  readonly #share: number;
  #start = performance.now();

  constructor(ms: number, share = BACKGROUND_SHARE) {
    this.#ms = ms;
    this.#share = share;
  }

  /** Whether the current slice has used its time. */
  get due(): boolean {
    return performance.now() - this.#start >= this.#ms;
  }

  /**
   * Lets the event loop run (longer while it is busy, see {@link backgroundTurn}), then starts a new slice. With
   * `whenIdle`, waits until no foreground work is under way (see {@link idleTurn}), or until `giveUp` says to stop
   * waiting: a busy process may keep idle work waiting for as long as it is busy.
   */
  async next(options: { whenIdle?: boolean; giveUp?: () => boolean } = {}): Promise<void> {
    if (options.whenIdle) await idleTurn(options.giveUp ?? (() => false));
    else await backgroundTurn(performance.now() - this.#start, this.#share);
    this.#start = performance.now();
  }
}
