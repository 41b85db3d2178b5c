/** A search request as a curl command to copy, with the key left as `$QUIRE_KEY` so that it never shows on screen. */

/** The curl command that sends `body` to this server's `/manage`. */
export function curlCommand(body) {
  const json = JSON.stringify(body).replaceAll("'", "'\\''");
  return [
    `curl -sS '${location.origin}/manage'`,
    `  -H 'content-type: application/json' -H 'x-service-version: v1'`,
    `  -H "x-project-key: $QUIRE_KEY"`,
    `  -d '${json}'`,
  ].join(" \\\n");
}
