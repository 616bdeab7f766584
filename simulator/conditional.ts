import type { IncomingMessage } from "node:http";

/** RFC 9110 §13.1: If-None-Match decides when present; If-Modified-Since only without it. */
export function notModified(
  req: IncomingMessage,
  v: { etag: string; lastModified: string },
): boolean {
  const inm = req.headers["if-none-match"];
  if (inm !== undefined) {
    return inm
      .split(",")
      .map((t) => t.trim().replace(/^W\//, ""))
      .some((t) => t === "*" || t === v.etag);
  }
  const ims = Date.parse(req.headers["if-modified-since"] ?? "");
  return !Number.isNaN(ims) && Date.parse(v.lastModified) <= ims;
}
