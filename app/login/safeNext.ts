/**
 * Where to go after logging in: `next` resolved against this page's origin the way a browser
 * resolves it (the WHATWG URL parser, which drops tabs and newlines and reads `\` as `/`), kept
 * only when it stays on that origin; else "/". A prefix check on the raw string is not enough:
 * `/%09/evil.example` decodes to "/\t/evil.example", which a browser reads as //evil.example.
 */
export function safeNext(next: string | null | undefined, origin: string): string {
  if (!next) return "/";
  let target: URL;
  try {
    target = new URL(next, origin);
  } catch {
    return "/";
  }
  if (target.origin !== new URL(origin).origin) return "/";
  return `${target.pathname}${target.search}${target.hash}`;
}
