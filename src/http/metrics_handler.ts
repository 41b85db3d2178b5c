/**
 * `GET /metrics`: open to loopback clients only, unless `METRICS_TOKEN` is set; then every client, loopback included,
 * needs `Authorization: Bearer <token>`, compared in constant time.
 */
import { timingSafeEqual } from "node:crypto";
import type { ServiceContext } from "../context.ts";
import { sha256Hex } from "../util/sha256_hex.ts";
import { renderMetrics } from "../observability/metrics_exposition.ts";
import { readProjectTotals } from "../projects/project_totals.ts";
import { rejectUnlessGet } from "./get_only.ts";
import { PROMETHEUS_CONTENT_TYPE } from "../observability/prometheus_text.ts";
import type { Route } from "./route.ts";

const encoder = new TextEncoder();

/**
 * The `/metrics` route; `token` is `METRICS_TOKEN`. A client that may not learn that the path exists gets null, and so
 * the answer of any unknown path.
 */
export function metricsRoute(ctx: ServiceContext, token: string | undefined): Route {
  // Hashes have one length, so comparing them in constant time reveals nothing of the token's length either.
  const tokenHash = token === undefined ? undefined : encoder.encode(sha256Hex(token));
  return { path: "/metrics", label: "metrics", handle };

  function handle(request: Request, { remoteAddr }: Deno.ServeHandlerInfo): Promise<Response> | null {
    if (tokenHash === undefined) {
      if (!isLoopback(remoteAddr)) return null;
    } else if (!presentsToken(request, tokenHash)) {
      return Promise.resolve(Response.json({ error: 'Missing or invalid "Authorization: Bearer" token' }, {
        status: 401,
        headers: { "www-authenticate": 'Bearer realm="metrics"' },
      }));
    }
    const rejected = rejectUnlessGet(request);
    if (rejected !== null) return Promise.resolve(rejected);
    return readProjectTotals(ctx.kv).then((totals) => {
      const text = renderMetrics(ctx.metrics, {
        usage: ctx.embedder.usage(),
        totals,
        searchCache: { bytes: ctx.indexStates.totalBytes(), budget: ctx.indexStates.budgetBytes },
        graphInsertsWaiting: ctx.indexStates.graphInsertsWaiting(),
        process: { number: ctx.instance.process, pid: ctx.instance.pid },
        memory: Deno.memoryUsage(),
      });
      return new Response(request.method === "HEAD" ? null : text, {
        headers: { "content-type": PROMETHEUS_CONTENT_TYPE },
      });
    });
  }
}

/** Whether the client connected over the loopback interface (IPv4, IPv6, or IPv4-mapped IPv6). */
function isLoopback(addr: Deno.Addr): boolean {
  if (addr.transport !== "tcp") return false;
  const host = addr.hostname.toLowerCase();
  return host.startsWith("127.") || host === "::1" || host.startsWith("::ffff:127.");
}

function presentsToken(request: Request, tokenHash: Uint8Array): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(request.headers.get("authorization") ?? "");
  if (match === null) return false;
  return timingSafeEqual(encoder.encode(sha256Hex(match[1]!)), tokenHash);
}
