/** Unit: the request path is read as `new URL(url).pathname` would give it. */
import assert from "node:assert/strict";
import { pathnameOf } from "../../src/http/pathname.ts";

Deno.test("pathnameOf agrees with new URL(url).pathname on serialised request URLs", () => {
  const urls = [
    "http://127.0.0.1:8000/manage",
    "http://127.0.0.1:8000/",
    "http://localhost/healthz?verbose=1",
    "http://[::1]:8000/openapi.json#top",
    "http://example.com/a/b?x=/y#z/w",
    "https://user:pw@example.com:443/m%C3%A4nage?q",
    new Request("http://h/x/../manage?a").url,
    new Request("http://h").url,
  ];
  for (const url of urls) assert.equal(pathnameOf(url), new URL(url).pathname, url);
});
