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

function href(el: XmlElement): string | undefined {
  const raw = numericRefs(el.attrs.href?.trim() ?? "");
  if (!raw) return undefined;
  return resolveUrl(raw, el.base) ?? raw;
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
    const url = href(l);
    if (url) return url;
  }
  return undefined;
}
