/**
 * `GET /healthz` (liveness: the process answers) and `GET /readyz` (readiness: the store answers and the default
 * model loads). Neither needs a key, and neither says more than which part is unavailable.
 */
import type { ServiceContext } from "../context.ts";
import { DEFAULT_MODEL_ID } from "../embedding/model_registry.ts";
import { probeStore } from "../storage/store_probe.ts";
import { rejectUnlessGet } from "./get_only.ts";
import type { Route } from "./route.ts";

/** How long a readiness probe waits for each part. */
const PROBE_TIMEOUT_MS = 2_000;

/** The routes of the two probes. */
export function healthRoutes(ctx: ServiceContext): Route[] {
  return [
    {
      path: "/healthz",
      label: "healthz",
      handle: (request) =>
        rejectUnlessGet(request) ??
          Response.json({ status: "ok", process: ctx.instance.process, pid: ctx.instance.pid }),
    },
    { path: "/readyz", label: "readyz", handle: (request) => rejectUnlessGet(request) ?? readiness(ctx) },
  ];
}

async function readiness(ctx: ServiceContext): Promise<Response> {
  const [store, model] = await Promise.all([
    probe(probeStore(ctx.kv)),
    probe(ctx.embedder.load(DEFAULT_MODEL_ID)),
  ]);
  const unavailable = [...store ? [] : ["store"], ...model ? [] : ["model"]];
  return unavailable.length === 0
    ? Response.json({ status: "ready" })
    : Response.json({ status: "unavailable", unavailable }, { status: 503 });
}

async function probe(work: Promise<unknown>): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS));
  try {
    return await Promise.race([work.then(() => true, () => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
