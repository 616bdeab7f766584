/** `href` made absolute against `base`; undefined when it cannot be (relative with no base, or junk). */
export function resolveUrl(href: string, base?: string): string | undefined {
  const trimmed = href.trim();
  if (!trimmed) return undefined;
  try {
    return new URL(trimmed, base).toString();
  } catch {
    return undefined;
  }
}
