/**
 * `GET /ui` and its files: the dashboard, under a strict Content-Security-Policy; and `GET /ui/settings.json`, what
 * its forms offer (the registry's models, the languages, the request limits). None needs a key: the page signs in
 * through `POST /manage` like any client.
 */
import type { ServiceContext } from "../context.ts";
import { DASHBOARD_ASSETS, DASHBOARD_PAGE, type DashboardAsset } from "../dashboard/dashboard_assets.ts";
import { DEFAULT_MODEL_ID } from "../embedding/model_registry.ts";
import { DEFAULT_LANGUAGE, LANGUAGES } from "../fulltext/languages.ts";
import { rejectUnlessGet } from "./get_only.ts";
import type { Route } from "./route.ts";

/** Where the dashboard is served. */
export const DASHBOARD_PATH = "/ui";

/** Only the page's own files run, load and connect; nothing inline, nothing from elsewhere, no framing. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-cache",
};

/** What the dashboard's forms offer. */
export interface DashboardSettings {
  models: string[];
  defaultModel: string | undefined;
  languages: readonly string[];
  defaultLanguage: string;
  maxDocsPerRequest: number;
  maxBodyBytes: number;
}

/** The routes of the page, its files and its settings. */
export function dashboardRoutes(ctx: ServiceContext, maxBodyBytes: number): Route[] {
  const models = ctx.embedder.modelIds();
  const settings: DashboardSettings = {
    models,
    defaultModel: models.includes(DEFAULT_MODEL_ID) ? DEFAULT_MODEL_ID : models[0],
    languages: LANGUAGES,
    defaultLanguage: DEFAULT_LANGUAGE,
    maxDocsPerRequest: ctx.limits.maxDocsPerRequest,
    maxBodyBytes,
  };
  const settingsAsset = { name: "settings.json", contentType: "application/json", text: JSON.stringify(settings) };
  const route = (path: string, asset: DashboardAsset): Route => ({
    path,
    label: "ui",
    handle: (request) =>
      rejectUnlessGet(request) ??
        new Response(asset.text, { headers: { "content-type": asset.contentType, ...SECURITY_HEADERS } }),
  });
  return [
    route(DASHBOARD_PATH, DASHBOARD_PAGE),
    route(`${DASHBOARD_PATH}/`, DASHBOARD_PAGE),
    route(`${DASHBOARD_PATH}/settings.json`, settingsAsset),
    ...DASHBOARD_ASSETS.map((asset) => route(`${DASHBOARD_PATH}/${asset.name}`, asset)),
  ];
}
