import { resolveUrl } from "./urls";
import { textOf, type XmlElement } from "./xmlTree";

// The XML parser decodes only the five named entities; a link written with a numeric reference
// (`&#38;`) is decoded here. Named HTML entities are not: `&copy=2` in a query string is data.
function numericRefs(url: string): string {
  return url.replace(
    /&#(?:[xX]([0-9a-fA-F]{1,6})|(\d{1,7}));/g,
    (ref, hex?: string, dec?: string) => {
      const code = hex ? Number.parseInt(hex, 16) : Number(dec);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : ref;
    },
  );
}

/** The text of a link-like element, made absolute against its xml:base; raw text if it cannot be. */
export function linkText(el: XmlElement | undefined): string | undefined {
  const raw = numericRefs(textOf(el).trim());
  if (!raw) return undefined;
  return resolveUrl(raw, el?.base) ?? raw;
}

/** The `href` of a link element, made absolute against its xml:base; raw if it cannot be. */
export function hrefOf(el: XmlElement): string | undefined {
  const raw = numericRefs(el.attrs.href?.trim() ?? "");
  if (!raw) return undefined;
  return resolveUrl(raw, el.base) ?? raw;
}

/**
 * An Atom link's target: its href, or, for a link without one, the URL written as its content
 * (`<link rel="alternate">https://…</link>`, which some generators emit). A link with neither
 * points nowhere and is passed over.
 */
function target(el: XmlElement): string | undefined {
  if (el.attrs.href !== undefined) return hrefOf(el);
  return /^(?:https?:\/\/|\/)/i.test(textOf(el).trim()) ? linkText(el) : undefined;
}

const HTML_TYPES = ["", "text/html", "application/xhtml+xml"];

/**
 * The page an Atom element points to: rel="alternate" (or no rel), HTML preferred over other
 * types (a podcast's audio alternate is not the article), then any alternate.
 */
export function alternateLink(links: XmlElement[]): string | undefined {
  const alternates = links.filter((l) => (l.attrs.rel?.trim() || "alternate") === "alternate");
  const html = alternates.filter((l) =>
    HTML_TYPES.includes((l.attrs.type ?? "").trim().toLowerCase()),
  );
  for (const l of [...html, ...alternates]) {
    const url = target(l);
    if (url) return url;
  }
  return undefined;
}
