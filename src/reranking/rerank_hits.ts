/**
 * `search`'s `rerank`: the first `topN` hits of the normal ranking, rescored by a cross-encoder on the query and each
 * hit's best passage and put in its order; `offset` and `limit` then page the reranked list, past whose window the
 * hits keep the normal order.
 */
import { ApiError } from "../api/api_error.ts";
import { DEFAULT_RERANK_TOP_N } from "../api/request_schemas.ts";
import type { Embedder } from "../embedding/embedder.ts";
import type { CrossEncoders } from "../embedding/cross_encoder.ts";
import { CrossEncoderError, type PairTokens } from "../embedding/cross_encoder_pairs.ts";
import type { SearchIndex } from "../search/search_index.ts";
import type { ScoredDoc } from "../search/search_query.ts";
import { hitText } from "./hit_text.ts";

/** A search's `rerank` as the request gives it. */
export interface RerankRequest {
  modelId: string;
  topN?: number | undefined;
}

/** A checked `rerank`: its cross-encoder, loading from the check on, and how many first hits it rescores. */
export interface Rerank {
  modelId: string;
  topN: number;
  encoders: CrossEncoders;
  /** The model's tokens, once it has loaded: the search waits for them only when it reranks. */
  tokens: Promise<PairTokens>;
}

/** A ranked document, with the cross-encoder's score where it was reranked (a pinned one never is). */
export interface RerankedDoc extends ScoredDoc {
  rerankScore?: number;
}

/** A page of a search: how many hits to skip, and how many to show. */
export interface PageBounds {
  offset: number;
  limit: number;
}

/**
 * The `rerank` of a search, its model starting to load (so that the load overlaps the index's); 400 for a model id
 * that names no reranker, listing the rerankers there are.
 */
export function checkedRerank(embedder: Embedder, asked: RerankRequest | undefined): Rerank | undefined {
  if (asked === undefined) return undefined;
  const { modelId } = asked;
  const encoders = embedder.crossEncoders;
  if (encoders.spec(modelId) === undefined) {
    const known = encoders.modelIds().map((id) => `"${id}"`).join(", ");
    const hint = known === "" ? "this server has no rerankers" : `use one of ${known}`;
    if (embedder.spec(modelId) !== undefined) {
      throw new ApiError(400, `Invalid "rerank.modelId": model "${modelId}" is not a reranker: ${hint}`);
    }
    throw new ApiError(400, `Unknown reranker "${modelId}": ${hint}`);
  }
  const tokens = encoders.tokens(modelId);
  tokens.catch(() => {}); // Awaited once there are hits to rerank.
  return { modelId, topN: asked.topN ?? DEFAULT_RERANK_TOP_N, encoders, tokens };
}

/** The hits a search ranks so that its page can be cut from the reranked list: from the first, as many as both need. */
export function rankedBounds(rerank: Rerank | undefined, page: PageBounds): PageBounds {
  if (rerank === undefined) return page;
  return { offset: 0, limit: Math.max(rerank.topN, page.offset + page.limit) };
}

/** What {@link rerankedPage} reads besides the hits. */
export interface RerankInput {
  index: SearchIndex;
  query: string;
  /** The terms the query's words matched, which pick the passage of a full-text hit. */
  terms: ReadonlySet<string>;
  page: PageBounds;
}

/**
 * The page of `hits` (ranked from the first, as {@link rankedBounds} asked) once the first `topN` are in the
 * cross-encoder's order, best first (ties keep their ranked order); 400 for a query too long for the model, 500 when
 * the model cannot load or run.
 */
export async function rerankedPage(rerank: Rerank, hits: RerankedDoc[], input: RerankInput): Promise<RerankedDoc[]> {
  const { index, query, terms, page } = input;
  const window = hits.slice(0, rerank.topN);
  // A pinned hit keeps its place: a pin is an editor's choice for the query, which no model overrules.
  const free = window.filter((hit) => hit.pinned !== true);
  if (page.offset >= window.length || free.length === 0) return hits.slice(page.offset, page.offset + page.limit);
  const scores = await modelCall(rerank.modelId, async () => {
    const tokens = await rerank.tokens;
    const queryTokens = tokens.count(query);
    // The query comes first in every pair, and only the hit's text is cut to the window; half stays for the text.
    if (queryTokens > tokens.window / 2) {
      throw new ApiError(
        400,
        `Invalid "query": it is ${queryTokens} tokens long; reranker "${rerank.modelId}" reads queries of at most ` +
          `${Math.floor(tokens.window / 2)}`,
      );
    }
    return await rerank.encoders.score(rerank.modelId, query, free.map((hit) => hitText(index, hit, terms)));
  });
  const best = free.map((hit, i) => ({ ...hit, rerankScore: scores[i]! }))
    .sort((a, b) => b.rerankScore - a.rerankScore);
  const reranked = window.map((hit) => hit.pinned === true ? hit : best.shift()!);
  return [...reranked, ...hits.slice(window.length)].slice(page.offset, page.offset + page.limit);
}

/** Runs a cross-encoder call; a model that cannot load or run becomes a 500 that names it and nothing internal. */
async function modelCall<T>(modelId: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof CrossEncoderError)) throw error;
    throw new ApiError(500, `Cannot rerank with model "${modelId}"`, { cause: error });
  }
}
