/**
 * The `Quire-Signature` header, as Stripe signs its events: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`,
 * keyed by the UTF-8 bytes of the project's whole webhook secret (`whsec_…`).
 */

const encoder = new TextEncoder();

/** The value of the `Quire-Signature` header of `body`, signed with `secret` at `t` (unix seconds). */
export async function signatureHeader(secret: string, body: string, t: number): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(`${t}.${body}`)));
  return `t=${t},v1=${mac.toHex()}`;
}
