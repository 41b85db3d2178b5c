/**
 * End-to-end: slow clients cannot hold the real server. A caller without a key is refused before its body is read; a
 * JSON Lines request line is bounded in size and time; a body that stalls gets 408 after the idle timeout, not the
 * whole body timeout; and connections that trickle their headers do not slow other clients down.
 *
 * The requests are written by hand over raw sockets, since `fetch` cannot send a body that stops midway. `Deno.serve`
 * puts no deadline on a request head or an idle keep-alive connection, so nothing here waits for one to close.
 *
 * One server process, with a body timeout of 2 s and an idle timeout of 1 s, serves every test, so that it starts once
 * (`sharedFixture`).
 */
import assert from "node:assert/strict";
import { serverEnvironment, type ServerProcess, startServerProcess, waitUntilReady } from "../_server_process.ts";
import { sharedFixture } from "../_shared_fixture.ts";

const encoder = new TextEncoder();

/** What a body that never ends declares as its length, far below `MAX_BODY_BYTES`. */
const DECLARED_LENGTH = 1_000_000;
/** The longest first line of a JSON Lines body. */
const MAX_FIRST_LINE_BYTES = 64 * 1024;

/** The server's answer to a raw request. */
interface RawAnswer {
  status: number;
  /** The body as it arrived, chunked framing included. */
  body: string;
  /** When the head of the answer arrived, in milliseconds since the request was opened. */
  ms: number;
}

/** One request written by hand over its own socket, so that its body can stop midway, and the answer it gets. */
class RawRequest implements AsyncDisposable {
  readonly #conn: Deno.TcpConn;
  readonly #opened = performance.now();
  readonly #answer: Promise<RawAnswer | undefined>;

  private constructor(conn: Deno.TcpConn) {
    this.#conn = conn;
    this.#answer = readAnswer(conn, this.#opened);
  }

  /** Opens a connection to `server` and sends the head of `POST /manage` with `headers`, then `body`. */
  static async open(server: ServerProcess, headers: Record<string, string>, body: string): Promise<RawRequest> {
    const { hostname, port } = new URL(server.url);
    const request = new RawRequest(await Deno.connect({ hostname, port: Number(port) }));
    await request.send(manageHead(headers) + body);
    return request;
  }

  /** Milliseconds since the request was opened. */
  get elapsedMs(): number {
    return performance.now() - this.#opened;
  }

  /** Sends more of the body; a server that has already answered and closed the connection is not an error here. */
  async send(text: string): Promise<void> {
    const bytes = encoder.encode(text);
    try {
      for (let at = 0; at < bytes.length;) at += await this.#conn.write(bytes.subarray(at));
    } catch {
      // The answer, read apart, says why the server stopped listening.
    }
  }

  /** The answer if it arrives within `ms`. */
  async answerWithin(ms: number): Promise<RawAnswer | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<undefined>((resolve) => timer = setTimeout(() => resolve(undefined), ms));
    try {
      return await Promise.race([this.#answer, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.#conn.close();
    await this.#answer;
  }
}

/** The head of `POST /manage` with `headers`. */
function manageHead(headers: Record<string, string>): string {
  const lines = Object.entries({ host: "127.0.0.1", "x-service-version": "v1", ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`);
  return `POST /manage HTTP/1.1\r\n${lines.join("")}\r\n`;
}

/** Reads one answer off `conn`: undefined when the connection ends, or is closed, before a whole head arrived. */
async function readAnswer(conn: Deno.TcpConn, opened: number): Promise<RawAnswer | undefined> {
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(16 * 1024);
  let text = "";
  let head: { status: number; length: number | undefined; ms: number; end: number } | undefined;
  try {
    for (;;) {
      if (head !== undefined) {
        const body = text.slice(head.end);
        const complete = head.length === undefined ? body.endsWith("0\r\n\r\n") : body.length >= head.length;
        if (complete) break;
      }
      const read = await conn.read(buffer);
      if (read === null) break;
      text += decoder.decode(buffer.subarray(0, read), { stream: true });
      const end = text.indexOf("\r\n\r\n");
      if (head === undefined && end !== -1) {
        const length = text.slice(0, end).match(/^content-length:\s*(\d+)/im)?.[1];
        head = {
          status: Number(text.split(" ", 2)[1]),
          length: length === undefined ? undefined : Number(length),
          ms: performance.now() - opened,
          end: end + 4,
        };
      }
    }
  } catch {
    // Closed by the test, or reset by the server: what arrived before is the answer.
  }
  return head === undefined ? undefined : { status: head.status, body: text.slice(head.end), ms: head.ms };
}

/** A test on one server process over a fresh store, ready to serve, with short body timeouts. */
const test = sharedFixture(async () => {
  const env = { LOG_REQUESTS: "false", BODY_TIMEOUT_MS: "2000", BODY_IDLE_TIMEOUT_MS: "1000" };
  const server = await startServerProcess({ ...(await serverEnvironment()), ...env });
  await waitUntilReady(server);
  return server;
}, (server) => server.stop());

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

test("a JSON Lines request without a key is answered 403 before any body byte is read", async (server) => {
  await using request = await RawRequest.open(server, {
    "content-type": "application/x-ndjson",
    "content-length": String(DECLARED_LENGTH),
  }, '{"act');
  const answer = await request.answerWithin(2_000);
  assert.equal(answer?.status, 403, "a 403 within 2 s, while the first line has not ended");
  assert.match(answer.body, /"error":/);
});

test("a JSON request without a key is answered 403 while its body is still unsent", async (server) => {
  await using request = await RawRequest.open(server, {
    "content-type": "application/json",
    "content-length": String(DECLARED_LENGTH),
  }, '{"act');
  const answer = await request.answerWithin(2_000);
  assert.equal(answer?.status, 403, "a 403 within 2 s, while the body has not arrived");
  assert.match(answer.body, /"error":/);
});

test("a JSON Lines first line over 64 KiB is answered 413 as soon as 64 KiB have arrived", async (server) => {
  // A kilobyte over the bound, of a body that declares a megabyte: the rest is never sent.
  const line = '{"action":"importIndex","projectId":"default","indexName":"big","pad":"';
  await using request = await RawRequest.open(server, {
    "content-type": "application/x-ndjson",
    "content-length": String(DECLARED_LENGTH),
    "x-project-key": server.key,
  }, line + "x".repeat(MAX_FIRST_LINE_BYTES + 1024 - line.length));
  const answer = await request.answerWithin(2_000);
  assert.equal(answer?.status, 413, "a 413 within 2 s, while the rest of the body has not arrived");
  assert.match(answer.body, /65536/);
});

test("a JSON Lines body that trickles in is answered 408 once BODY_TIMEOUT_MS has passed", async (server) => {
  await using request = await RawRequest.open(server, {
    "content-type": "application/x-ndjson",
    "content-length": String(DECLARED_LENGTH),
    "x-project-key": server.key,
  }, '{"action":"importIndex","projectId":"default","indexName":"slow","pad":"');
  // A few bytes every 300 ms, each well within any idle timeout, never ending the first line.
  let answer: RawAnswer | undefined;
  while (answer === undefined && request.elapsedMs < 3_000) {
    await request.send("xxxx");
    answer = await request.answerWithin(300);
  }
  assert.equal(answer?.status, 408, "a 408 within about 3 s");
  assert.match(answer.body, /took too long/);
});

test("a JSON body that stalls for longer than BODY_IDLE_TIMEOUT_MS is answered 408 before BODY_TIMEOUT_MS", async (server) => {
  const body = JSON.stringify({ action: "listIndexes", projectId: "default", pad: "x".repeat(1000) });
  await using request = await RawRequest.open(server, {
    "content-type": "application/json",
    "content-length": String(body.length),
    "x-project-key": server.key,
  }, body.slice(0, body.length / 2));
  const answer = await request.answerWithin(2_500);
  assert.equal(answer?.status, 408, "a 408 within 2.5 s of a body that stopped halfway");
  assert.ok(answer.ms >= 900, `answered after the idle timeout, not before: ${answer.ms.toFixed(0)} ms`);
  assert.ok(answer.ms < 1_900, `answered at the idle timeout, before the body timeout: ${answer.ms.toFixed(0)} ms`);
  assert.match(answer.body, /took too long/);
});

test("500 connections that send one header byte every few seconds do not stop a normal client from being served within 1 s", async (server) => {
  const { hostname, port } = new URL(server.url);
  const base = server.url.replace("/manage", "");
  const head = encoder.encode("GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n");
  const slow: Deno.TcpConn[] = [];
  try {
    for (let i = 0; i < 500; i++) slow.push(await Deno.connect({ hostname, port: Number(port) }));
    let dripping = true;
    const drip = (async () => {
      // One byte on every connection each 2 s for 6 s: none ever finishes its head.
      for (let round = 0; round < 3; round++) {
        await Promise.allSettled(slow.map((conn) => conn.write(head.subarray(round, round + 1))));
        await delay(2_000);
      }
      dripping = false;
    })();
    const probes: Record<string, () => Promise<Response>> = {
      "GET /healthz": () => fetch(`${base}/healthz`),
      "listIndexes": () => server.call({ action: "listIndexes" }),
    };
    let served = 0;
    while (dripping) {
      for (const [name, probe] of Object.entries(probes)) {
        const started = performance.now();
        const response = await probe();
        await response.body?.cancel();
        const ms = performance.now() - started;
        assert.equal(response.status, 200, `${name} answered`);
        assert.ok(ms < 1_000, `${name} answered within 1 s, while 500 connections trickle: ${ms.toFixed(0)} ms`);
        served++;
      }
      await delay(500);
    }
    await drip;
    assert.ok(served >= 12, `probed throughout: ${served} answers`);
  } finally {
    for (const conn of slow) conn.close();
  }
});
