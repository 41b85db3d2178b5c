/**
 * `GET /openapi.json` (the OpenAPI document, built once for the configured limits) and `GET /` (where to find the API
 * and that document). Neither needs a key.
 */
import denoConfig from "../../deno.json" with { type: "json" };
import type { Limits } from "../api/request_schemas.ts";
import { openApiDocument } from "../api/openapi_document.ts";
import type { ServiceInfo } from "../api/response_schemas.ts";
import { rejectUnlessGet } from "./get_only.ts";

/** The path of the OpenAPI document. */
export const OPENAPI_PATH = "/openapi.json";

/** Answers the documentation paths; null for any other path, which the caller handles. */
export type DocsResponder = (request: Request, pathname: string) => Response | null;

/** Builds the OpenAPI document and the service pointer once, and returns what answers their paths. */
export function createDocsResponder(limits: Limits): DocsResponder {
  const openApi = JSON.stringify(openApiDocument(limits, denoConfig.version));
  const info: ServiceInfo = {
    name: "quire",
    version: denoConfig.version,
    docs: OPENAPI_PATH,
    api: "POST /manage",
    health: "/healthz",
  };
  return (request, pathname) => {
    if (pathname !== "/" && pathname !== OPENAPI_PATH) return null;
    const rejected = rejectUnlessGet(request);
    if (rejected !== null) return rejected;
    if (pathname === "/") return Response.json(info);
    return new Response(openApi, { headers: { "content-type": "application/json" } });
  };
}
