/**
 * `GET /openapi.json` (the OpenAPI document, built once for the configured limits, when first asked for: building it
 * took about 15 ms of a start) and `GET /` (where to find the API and that document). Neither needs a key.
 */
import denoConfig from "../../deno.json" with { type: "json" };
import type { Limits } from "../api/request_schemas.ts";
import { openApiDocument } from "../api/openapi_document.ts";
import type { ServiceInfo } from "../api/response_schemas.ts";
import { rejectUnlessGet } from "./get_only.ts";
import type { Route } from "./route.ts";

/** The path of the OpenAPI document. */
export const OPENAPI_PATH = "/openapi.json";

/** Returns the routes that answer the OpenAPI document and the service pointer. */
export function docsRoutes(limits: Limits): Route[] {
  let openApi: string | undefined;
  const info: ServiceInfo = {
    name: "quire",
    version: denoConfig.version,
    docs: OPENAPI_PATH,
    api: "POST /manage",
    health: "/healthz",
  };
  return [
    { path: "/", label: "root", handle: (request) => rejectUnlessGet(request) ?? Response.json(info) },
    {
      path: OPENAPI_PATH,
      label: "openapi.json",
      handle: (request) =>
        rejectUnlessGet(request) ??
          new Response(openApi ??= JSON.stringify(openApiDocument(limits, denoConfig.version)), {
            headers: { "content-type": "application/json" },
          }),
    },
  ];
}
