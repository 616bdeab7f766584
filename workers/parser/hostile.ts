import { FeedParseError } from "./errors";

// Feeds never need entity declarations: every entity a feed uses is one of XML's five or a
// numeric reference, and HTML names are decoded by us afterwards. Refusing `<!ENTITY` in the
// prolog stops billion laughs, quadratic blowup, XXE (file and http) and parameter entities
// before the XML parser sees them; the scan is linear in the prolog, well under 1 ms even for a
// multi-megabyte body. A DOCTYPE without declarations (RSS 0.91's public DTD) is harmless:
// nothing here ever fetches a DTD. Only the prolog is scanned, so an article quoting
// `<!ENTITY` inside CDATA is not refused.

/** Index just past the DOCTYPE starting at `start`, internal subset, quotes and comments included. */
export function doctypeEnd(text: string, start: number): number {
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
 * for entity declarations.
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
 * Throws FeedParseError for entity declarations; otherwise returns the document from its root
 * element on. The prolog is dropped because nothing in it matters once checked. (A DOCTYPE
 * inside the document is refused by xmlTree.ts as it reads, and by readFeedInSlices.ts's scan.)
 */
export function stripSafeProlog(text: string): string {
  return text.slice(safePrologEnd(text));
}
