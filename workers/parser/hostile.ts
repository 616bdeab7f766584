import { FeedParseError } from "./errors";

// Feeds never need entity declarations: every entity a feed uses is one of XML's five or a
// numeric reference, and HTML names are decoded by us afterwards. Refusing `<!ENTITY` in the
// prolog stops billion laughs, quadratic blowup, XXE (file and http) and parameter entities
// before the XML parser sees them; the scan is linear in the prolog, well under 1 ms even for a
// multi-megabyte body. A DOCTYPE without declarations (RSS 0.91's public DTD) is harmless:
// nothing here ever fetches a DTD. Only the prolog is scanned, so an article quoting
// `<!ENTITY` inside CDATA is not refused.

/** Index just past the DOCTYPE starting at `start`, internal subset, quotes and comments included. */
function doctypeEnd(text: string, start: number): number {
  let depth = 0;
  let quote = "";
  for (let i = start + 9; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (text.startsWith("<!--", i)) {
      const end = text.indexOf("-->", i + 4);
      if (end === -1) return text.length;
      i = end + 2;
    } else if (c === "[") {
      depth++;
    } else if (c === "]") {
      depth--;
    } else if (c === ">" && depth <= 0) {
      return i + 1;
    }
  }
  return text.length;
}

/** Index of the first thing after the XML declaration, comments, processing instructions and DOCTYPE. */
function prologEnd(text: string): number {
  let i = 0;
  for (;;) {
    while (i < text.length && /\s/.test(text[i] ?? "")) i++;
    if (text.startsWith("<?", i) || text.startsWith("<!--", i)) {
      const close = text.startsWith("<?", i) ? "?>" : "-->";
      const end = text.indexOf(close, i + 2);
      if (end === -1) return text.length;
      i = end + close.length;
    } else if (text.slice(i, i + 9).toUpperCase() === "<!DOCTYPE") {
      i = doctypeEnd(text, i);
    } else {
      return i;
    }
  }
}

/**
 * Where the document's root element starts, after checking the prolog: throws FeedParseError
 * for entity declarations. (readFeedInSlices.ts refuses a DOCTYPE inside the document during
 * its own scan, instead of the whole-text pass below.)
 */
export function safePrologEnd(text: string): number {
  const end = prologEnd(text);
  if (/<!ENTITY/i.test(text.slice(0, end))) {
    throw new FeedParseError(
      "the DOCTYPE declares entities (<!ENTITY); feeds never need them and entity declarations are how billion-laughs and XXE attacks work",
    );
  }
  return end;
}

/**
 * Throws FeedParseError for entity declarations (or a DOCTYPE inside the document); otherwise
 * returns the document from its root element on. The prolog is dropped because nothing in it
 * matters once checked, and fast-xml-parser would read HTML's lowercase `<!doctype html>` as an
 * element.
 */
export function stripSafeProlog(text: string): string {
  const end = safePrologEnd(text);
  // fast-xml-parser also honours a DOCTYPE found inside the root element, which XML forbids;
  // refuse one there too (CDATA sections, where an article may quote one, are skipped).
  if (/<!DOCTYPE/i.test(text.slice(end).replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, ""))) {
    throw new FeedParseError("a DOCTYPE appears after the root element started; XML forbids it");
  }
  return text.slice(end);
}
