/**
 * The dashboard pages' Content-Security-Policy (docs/decisions/009). Scripts run only with this
 * response's nonce (Next.js puts it on its own bootstrap and bundle scripts when it finds it in the
 * request's CSP header) and what those load ('strict-dynamic'); no eval outside development,
 * where React needs it for its error overlays. Styles allow inline: React and Recharts render
 * style attributes, which a nonce cannot cover, and a style cannot run code.
 */
export function pageCsp(nonce: string, { development = false } = {}): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${development ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** For API answers (JSON, never a document to render): nothing may load, nothing may frame. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/** A fresh nonce: 128 random bits, base64. */
export function newNonce(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
}
