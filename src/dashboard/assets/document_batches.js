/** Reading documents from pasted text or a file, and cutting them into requests the server accepts. */

/**
 * The documents of `text`: a JSON array of documents, one document, `{ "docs": [...] }`, or JSON Lines (one document
 * per line). Throws an Error that names the line of the first bad one.
 */
export function parseDocuments(text) {
  const trimmed = text.trim();
  if (trimmed === "") throw new Error("There are no documents: paste a JSON array or JSON Lines");
  let whole;
  try {
    whole = JSON.parse(trimmed);
  } catch (error) {
    if (trimmed.startsWith("[")) throw new Error(`The documents are not valid JSON: ${error.message}`);
    return trimmed.split("\n").map((line, i) => [line.trim(), i + 1]).filter(([line]) => line !== "").map(
      ([line, number]) => {
        try {
          return asDocument(JSON.parse(line), `Line ${number}`);
        } catch (error) {
          throw new Error(`Line ${number} is not a document: ${error.message}`);
        }
      },
    );
  }
  if (Array.isArray(whole) && whole.length === 0) throw new Error("There are no documents: the array is empty");
  if (Array.isArray(whole)) return whole.map((doc, i) => asDocument(doc, `Document ${i + 1}`));
  if (Array.isArray(whole?.docs)) return whole.docs.map((doc, i) => asDocument(doc, `Document ${i + 1}`));
  return [asDocument(whole, "The document")];
}

function asDocument(value, name) {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`${name} is not a JSON object`);
  }
  return value;
}

/** Room for the rest of an `addDocs` body (action, project, index, options) besides its documents. */
const ENVELOPE_BYTES = 4096;

/**
 * Cuts `docs` into batches of at most `maxDocs` documents whose JSON stays under `maxBytes`. A document too big for
 * any request goes alone, so that the server names it.
 */
export function batchDocuments(docs, { maxDocs, maxBytes }) {
  const encoder = new TextEncoder();
  const room = Math.max(maxBytes - ENVELOPE_BYTES, 1);
  const batches = [];
  let batch = [];
  let bytes = 0;
  for (const doc of docs) {
    const size = encoder.encode(JSON.stringify(doc)).byteLength + 1;
    if (batch.length > 0 && (batch.length === maxDocs || bytes + size > room)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(doc);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}
