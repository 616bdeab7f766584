/** Escapes text for XML and HTML element content and attribute values. */
export function esc(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

/** RFC 822 dates for RSS 2.0 and HTTP headers ("Mon, 30 Nov 2026 06:56:40 GMT"). */
export const rfc822 = (ms: number): string => new Date(ms).toUTCString();
export const iso = (ms: number): string => new Date(ms).toISOString();
