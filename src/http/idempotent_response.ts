/** Answers a write that carries an `Idempotency-Key`: runs it once and keeps its answer, or replays the kept one. */
import type { IdempotentRequest, IdempotentRequests, KeptAnswer } from "../idempotency/idempotent_requests.ts";
import { errorResponse } from "./error_response.ts";
import { replyResponse } from "./reply_response.ts";

/**
 * The response of `run` the first time, kept before it is sent, so that a repeat after the answer left finds it; the
 * kept answer with `Idempotent-Replayed: true` for a repeat. A 5xx is not kept: a retry runs again.
 */
export async function idempotentResponse(
  requests: IdempotentRequests,
  request: IdempotentRequest & { action: string },
  run: () => Promise<unknown>,
): Promise<Response> {
  const start = await requests.start(request);
  if ("replay" in start) {
    const { status, headers, body } = start.replay;
    const response = new Response(body, { status, headers });
    response.headers.set("idempotent-replayed", "true");
    return response;
  }
  let answer: KeptAnswer | null = null;
  try {
    let response: Response;
    try {
      response = replyResponse(await run());
    } catch (error) {
      response = errorResponse(error, request.action);
    }
    if (response.status >= 500) return response;
    answer = { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  } finally {
    await start.settle(answer);
  }
}
