/**
 * Splits a text into passages that fit a model's window, counted in the model's own tokens. Passages are made of whole
 * sentences where they fit, of words within a longer sentence, and of pieces of a word longer than a passage. Each
 * passage after the first opens with the end of the one before: its last sentences, up to `overlapTokens` tokens of
 * them, and at least the last one when it is shorter than half a passage; otherwise its last words, up to
 * `overlapTokens` tokens of them, so that unpunctuated text and long sentences overlap too.
 */
import type { ModelTokens } from "../embedding/embedder.ts";
import type { PassageSpan } from "../search/indexed_doc.ts";
import type { PassageSettings } from "./passage_settings.ts";

/** A run of text that stays whole within a passage, and its tokens. */
interface Unit {
  start: number;
  end: number;
  tokens: number;
}

/** Made when first used: making it costs about 8 ms, at the start of every process that imports this module. */
let sentences: Intl.Segmenter | undefined;

/**
 * The passages of `text`, in order. They cover the text from start to end (an empty text is one empty passage), and
 * each holds at most `settings.maxTokens` tokens with the model's special tokens.
 */
export function splitPassages(text: string, tokens: ModelTokens, settings: PassageSettings): PassageSpan[] {
  const budget = settings.maxTokens - tokens.specialTokens;
  sentences ??= new Intl.Segmenter("en", { granularity: "sentence" });
  const units = fitUnits(text, [...sentences.segment(text)].map(({ index, segment }) => span(index, segment)), {
    tokens,
    budget,
  });
  if (units.length === 0) return [{ start: 0, end: text.length }];
  const passages: PassageSpan[] = [];
  for (let first = 0; first < units.length;) {
    let end = first;
    let sum = 0;
    while (end < units.length && (end === first || sum + units[end]!.tokens <= budget)) sum += units[end++]!.tokens;
    // Token counts of pieces may not add up to the count of the whole (a tokenizer may merge across them).
    while (end - first > 1 && tokens.count([text.slice(units[first]!.start, units[end - 1]!.end)])[0]! > budget) {
      end--;
    }
    passages.push({ start: units[first]!.start, end: units[end - 1]!.end });
    if (end === units.length) break;
    // The overlap leaves room for the next unit, so that every passage holds some text that is new.
    const room = Math.min(settings.overlapTokens, budget - units[end]!.tokens);
    const next = overlapStart(units, first, end, room, budget);
    const tail = next === end && room > 0 ? splitTail(text, units[end - 1]!, tokens, room) : undefined;
    // No whole sentence fits the overlap: the last one's tail becomes units[end], where the next passage starts.
    if (tail !== undefined) units.splice(end - 1, 1, ...tail);
    first = tail !== undefined ? end : Math.max(first + 1, next);
  }
  return passages;
}

/**
 * Where the passage after `units[first..end)` starts, so that it repeats the last units of this one: as many as hold
 * at most `room` tokens, or else the last one when it is shorter than half a passage and `units[end]` fits beside it.
 */
function overlapStart(units: Unit[], first: number, end: number, room: number, budget: number): number {
  let start = end;
  let overlap = 0;
  while (start - 1 > first && overlap + units[start - 1]!.tokens <= room) overlap += units[--start]!.tokens;
  const last = units[end - 1]!.tokens;
  if (start === end && end - 1 > first && last < budget / 2 && last + units[end]!.tokens <= budget) start = end - 1;
  return start;
}

/**
 * `unit` cut before its last words, as many as hold at most `room` tokens, for the next passage to open with;
 * undefined when the unit is one word, or its last word alone holds more.
 */
function splitTail(text: string, unit: Unit, tokens: ModelTokens, room: number): [Unit, Unit] | undefined {
  const words = wordSpans(text, unit.start, unit.end);
  const counts = tokens.count(words.map(({ start, end }) => text.slice(start, end)));
  let at = words.length;
  let overlap = 0;
  while (at > 1 && overlap + counts[at - 1]! <= room) overlap += counts[--at]!;
  if (at === words.length) return undefined;
  const cut = words[at]!.start;
  return [{ start: unit.start, end: cut, tokens: unit.tokens - overlap }, {
    start: cut,
    end: unit.end,
    tokens: overlap,
  }];
}

interface Fitting {
  tokens: ModelTokens;
  budget: number;
}

/** Counts the tokens of `spans`, splitting any that do not fit into words, and words into pieces, until all fit. */
function fitUnits(text: string, spans: PassageSpan[], fitting: Fitting): Unit[] {
  if (spans.length === 0) return [];
  const counts = fitting.tokens.count(spans.map(({ start, end }) => text.slice(start, end)));
  const units: Unit[] = [];
  spans.forEach(({ start, end }, i) => {
    const tokens = counts[i]!;
    const pieces = tokens <= fitting.budget ? [] : splitSpan(text, start, end);
    // One code point that is more tokens than a passage holds stays whole; `passageSettings` makes that impossible.
    if (pieces.length < 2) units.push({ start, end, tokens });
    else units.push(...fitUnits(text, pieces, fitting));
  });
  return units;
}

/** A span split in smaller ones: at the starts of its words when it has several, otherwise in two halves. */
function splitSpan(text: string, start: number, end: number): PassageSpan[] {
  const words = wordSpans(text, start, end);
  if (words.length > 1) return words;
  let middle = start + Math.floor((end - start) / 2);
  // Never between the two halves of a surrogate pair.
  if (/[\udc00-\udfff]/.test(text[middle] ?? "")) middle++;
  if (middle <= start || middle >= end) return [{ start, end }];
  return [{ start, end: middle }, { start: middle, end }];
}

/** The words of `text[start..end)`, each with the space after it; the first also with any space before it. */
function wordSpans(text: string, start: number, end: number): PassageSpan[] {
  const starts = [...text.slice(start, end).matchAll(/\S+/g)].map((match) => start + match.index).filter((at) =>
    at > start
  );
  const bounds = [start, ...starts, end];
  return bounds.slice(1).map((boundary, i) => ({ start: bounds[i]!, end: boundary }));
}

function span(index: number, segment: string): PassageSpan {
  return { start: index, end: index + segment.length };
}
