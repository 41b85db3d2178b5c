/** Host names as a URL writes them, so that a list of allowed hosts and a URL's host compare exactly. */

/**
 * `host` or `host:port` as a URL writes it: lower case, IDNA (punycode), IPv4 in dotted decimal, IPv6 in brackets (a
 * bare `::1` is read as that address), a port kept as given even when it is the scheme's default. Null when `text` is
 * not a host.
 */
export function normalizeHost(text: string): string | null {
  let value = text.trim();
  if (value === "" || value.endsWith(":") || /[/?#@\\\s]/.test(value)) return null;
  // A bare IPv6 address such as ::1 has more than one colon, where a host and port have one.
  if (!value.startsWith("[") && (value.match(/:/g) ?? []).length > 1) value = `[${value}]`;
  const portMatch = /^(.*?):(\d{1,5})$/.exec(value);
  const hostPart = portMatch === null || value.endsWith("]") ? value : portMatch[1]!;
  const port = portMatch === null || value.endsWith("]") ? undefined : Number(portMatch[2]);
  if (port !== undefined && (port < 1 || port > 65_535)) return null;
  let url: URL;
  try {
    url = new URL(`http://${hostPart}`);
  } catch {
    return null;
  }
  if (url.port !== "" || url.username !== "" || url.pathname !== "/" || url.hostname === "") return null;
  return port === undefined ? url.hostname : `${url.hostname}:${port}`;
}

/**
 * Whether `url`'s host and port are in `allowed` (normalized by {@link normalizeHost}): a listed `host:port` allows
 * that port, and a listed host without one the scheme's default port only (443 for https, 80 for http), so that
 * allowing `localhost` does not open every local port.
 */
export function hostAllowed(url: URL, allowed: readonly string[]): boolean {
  // A URL leaves out its scheme's default port, even when it was written: "https://a:443/" has the port "".
  if (url.port === "" && allowed.includes(url.hostname)) return true;
  const port = url.port !== "" ? url.port : url.protocol === "https:" ? "443" : "80";
  return allowed.includes(`${url.hostname}:${port}`);
}

/** Whether a URL's hostname is a loopback address: `localhost`, `127.0.0.0/8` or `[::1]`. */
export function isLoopbackHostname(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}
