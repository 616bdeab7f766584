import { API_CSP } from "./csp";

/**
 * Response headers for every route (docs/decisions/009), and the fixed CSP of API answers. The
 * pages' Content-Security-Policy carries a per-request nonce, so proxy.ts sets it. next.config.ts
 * gives these to every answer Next makes; the public read path's direct answers
 * (lib/readmodel/directPath.ts) carry the same.
 */
export const SECURITY_HEADERS = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
  { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=(), payment=()" },
];

export const API_HEADERS = [{ key: "Content-Security-Policy", value: API_CSP }];
