/** The public keys that verify tenant tokens: Ed25519 (EdDSA) and P-256 (ES256) JWKs, imported with WebCrypto. */

/** How a token signed for one kind of public key is verified. */
export interface TokenAlgorithm {
  /** The JWS `alg` that tokens of this key name. */
  alg: "EdDSA" | "ES256";
  importParams: EcKeyImportParams | Algorithm;
  verifyParams: EcdsaParams | Algorithm;
}

const ED25519: TokenAlgorithm = { alg: "EdDSA", importParams: { name: "Ed25519" }, verifyParams: { name: "Ed25519" } };
const P256: TokenAlgorithm = {
  alg: "ES256",
  importParams: { name: "ECDSA", namedCurve: "P-256" },
  verifyParams: { name: "ECDSA", hash: "SHA-256" },
};

/** The algorithm of a public JWK, or a message saying why it is not one quire takes. */
export function tokenAlgorithmOf(jwk: JsonWebKey): TokenAlgorithm | string {
  if ("d" in jwk) return 'it holds a private part ("d"): register only the public key';
  if (jwk.kty === "OKP" && jwk.crv === "Ed25519") return ED25519;
  if (jwk.kty === "EC" && jwk.crv === "P-256") return P256;
  return 'expected an Ed25519 ("kty": "OKP") or P-256 ("kty": "EC") public JWK';
}

/** Imports a public JWK for verifying; throws (a DOMException or TypeError) when it is malformed. */
export async function importPublicKey(jwk: JsonWebKey, algorithm: TokenAlgorithm): Promise<CryptoKey> {
  const { kty, crv, x, y } = jwk;
  const clean = algorithm.alg === "ES256" ? { kty, crv, x, y } : { kty, crv, x };
  return await crypto.subtle.importKey("jwk", clean, algorithm.importParams, false, ["verify"]);
}
