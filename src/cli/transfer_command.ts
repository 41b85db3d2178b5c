/**
 * `cli export` and `cli import`: back up and restore indexes of a running server over HTTP, as JSON Lines, one index
 * or a whole project. A project export is the exports of its indexes one after another, each opening with its header
 * line; import splits the stream at those lines.
 */
import { QuireClient } from "../../client.ts";
import { isExportHeader } from "../transfer/export_format.ts";
import { textLines } from "../util/text_lines.ts";
import { progress } from "./progress_line.ts";

/** The transfer commands, one per line. */
export const TRANSFER_COMMANDS =
  `  export [index]                  write one index, or every index of the project, to stdout as JSON Lines
  import [index]                  create the indexes of a JSON Lines export read from stdin (one index may
                                  take a new name)
  Both talk to QUIRE_URL (default http://localhost:8000) as QUIRE_PROJECT (default "default") with QUIRE_KEY.`;

/** Where the server is and whose indexes to move. */
export interface TransferTarget {
  url: string;
  projectId: string;
  key: string;
}

const encoder = new TextEncoder();

/** Writes one index, or every index of the project, to `out`; returns the names written. */
export async function exportIndexes(
  target: TransferTarget,
  indexName: string | undefined,
  out: WritableStream<Uint8Array>,
): Promise<string[]> {
  const quire = clientOf(target);
  const names = indexName === undefined ? await allIndexNames(quire) : [indexName];
  for (const name of names) {
    await (await quire.exportIndex(name)).pipeTo(out, { preventClose: true });
    progress(`exported ${name}`);
  }
  await out.close();
  return names;
}

/** Creates the indexes of the export read from `input`; `indexName` renames the one index of a single export. */
export async function importIndexes(
  target: TransferTarget,
  indexName: string | undefined,
  input: ReadableStream<Uint8Array>,
): Promise<string[]> {
  const quire = clientOf(target);
  const lines = nonBlank(textLines(input))[Symbol.asyncIterator]();
  const imported: string[] = [];
  let next = await lines.next();
  while (!next.done) {
    const header = JSON.parse(next.value);
    if (!isExportHeader(header)) throw new Error(`Expected an index header line, got: ${next.value.slice(0, 80)}`);
    const name = indexName ?? header.name;
    let following: IteratorResult<string> | undefined;
    const first = next.value;
    const body = async function* (): AsyncGenerator<Uint8Array> {
      yield encoder.encode(`${first}\n`);
      for (following = await lines.next(); !following.done; following = await lines.next()) {
        if (isHeaderLine(following.value)) return;
        yield encoder.encode(`${following.value}\n`);
      }
    };
    await quire.importIndex(name, ReadableStream.from(body()));
    if (indexName !== undefined && following !== undefined && !following.done) {
      throw new Error("The input holds several indexes: import it without a name to keep theirs");
    }
    imported.push(name);
    progress(`imported ${name}`);
    next = following ?? { done: true, value: undefined };
  }
  return imported;
}

function clientOf(target: TransferTarget): QuireClient {
  return new QuireClient({ baseUrl: target.url, projectId: target.projectId, key: target.key });
}

async function allIndexNames(quire: QuireClient): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await quire.listIndexes({ limit: 100, cursor });
    names.push(...page.items.map((index) => index.name));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return names;
}

async function* nonBlank(lines: AsyncIterable<string>): AsyncGenerator<string> {
  for await (const line of lines) if (line.trim() !== "") yield line;
}

function isHeaderLine(line: string): boolean {
  return line.startsWith('{"quire":"index"') && isExportHeader(JSON.parse(line));
}
