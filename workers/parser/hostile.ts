import { FeedParseError } from "./errors";

// Feeds rarely need entity declarations, but some real ones have a DOCTYPE whose internal subset
// declares a few names for plain text (`<!ENTITY nbsp "&#160;">`, `<!ENTITY site "Dhaka Wire">`)
// and use them in titles. Those are read; everything that makes declarations dangerous is
// refused before the XML parser sees the document:
//   - external entities (SYSTEM / PUBLIC: XXE, file and http) and parameter entities (`%`),
//     so nothing is ever fetched or read from disk;
//   - a value that refers to another declared entity (how billion laughs nests) or holds markup
//     (`<`), so an expansion is one plain string, never re-read;
//   - more than MAX_DECLARATIONS names or a value over MAX_VALUE_CHARS characters;
//   - and, as the document is read (xmlTree.ts), more than MAX_EXPANSION_CHARS characters
//     produced by references in all, which bounds quadratic blowup (one big value used many
//     times) to ~2 MB of text whatever the document does.
// The scan is linear in the prolog, well under 1 ms even for a multi-megabyte body. A DOCTYPE
// without declarations (RSS 0.91's public DTD) is harmless: nothing here ever fetches a DTD.
// Only the prolog is read, so an article quoting `<!ENTITY` inside CDATA is not touched.

// XHTML's three entity sets declare 253 names between them; a feed's own subset a handful.
const MAX_DECLARATIONS = 512;
// A phrase or a paragraph of boilerplate; an entity is not where a feed keeps its articles.
const MAX_VALUE_CHARS = 4_096;
// 10,000 uses of a 100-character value; a real feed expands a few hundred characters.
export const MAX_EXPANSION_CHARS = 1_000_000;

/**
 * The plain-text entities a document's DOCTYPE declares, with what their references may still
 * produce; one budget per document (readFeedInSlices shares it across its slices).
 */
export interface DeclaredEntities {
  values: Map<string, string>;
  budget: { left: number };
}

function refuse(what: string): FeedParseError {
  return new FeedParseError(`the DOCTYPE ${what}`);
}

const PREDEFINED: Record<string, string> = { lt: "<", gt: ">", amp: "&", apos: "'", quot: '"' };

/**
 * An entity's value as the text a reference to it stands for: character references expanded
 * (at declaration, as XML says), then the five predefined entities (at use). Throws for
 * anything but plain text.
 */
function entityText(name: string, literal: string): string {
  if (literal.includes("%")) {
    throw refuse(`entity "${name}" uses a parameter entity (%); refused`);
  }
  const replacement = literal.replace(
    /&#(?:[xX]([0-9a-fA-F]{1,6})|(\d{1,7}));/g,
    (ref, hex?: string, dec?: string) => {
      const code = hex ? Number.parseInt(hex, 16) : Number(dec);
      if (code < 1 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
        throw refuse(`entity "${name}" holds an invalid character reference ${ref}`);
      }
      return String.fromCodePoint(code);
    },
  );
  if (replacement.includes("<")) {
    throw refuse(`entity "${name}" holds markup; only plain text is accepted`);
  }
  // a bare "&" stays as it is, as the XML parser leaves it in text
  const text = replacement.replace(/&([^;\s&]+);/g, (ref, inner: string) => {
    const value = PREDEFINED[inner];
    if (value === undefined) {
      throw refuse(
        `entity "${name}" refers to another entity (${ref.slice(0, 40)}); nested entities are how billion-laughs attacks work`,
      );
    }
    return value;
  });
  if (text.length > MAX_VALUE_CHARS) {
    throw refuse(`entity "${name}" is longer than ${MAX_VALUE_CHARS} characters`);
  }
  return text;
}

/** Index past the `>` closing the declaration at `from`, quoted values skipped. */
function declarationEnd(subset: string, from: number): number {
  let quote = "";
  for (let i = from; i < subset.length; i++) {
    const c = subset[i];
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === ">") {
      return i + 1;
    }
  }
  throw refuse("has a declaration that is not closed");
}

const ENTITY_DECLARATION = /^<!ENTITY\s+([^\s"'>%&;]+)\s+(?:"([^"]*)"|'([^']*)')\s*>/;

/** The declarations of one internal subset into `values`; throws for anything dangerous. */
function readSubset(subset: string, values: Map<string, string>): void {
  let i = 0;
  while (i < subset.length) {
    while (i < subset.length && /\s/.test(subset[i] as string)) i++;
    if (i >= subset.length) break;
    if (subset.startsWith("<!--", i)) {
      const end = subset.indexOf("-->", i + 4);
      if (end === -1) throw refuse("has a comment that is not closed");
      i = end + 3;
    } else if (subset.startsWith("<?", i)) {
      const end = subset.indexOf("?>", i + 2);
      if (end === -1) throw refuse("has a processing instruction that is not closed");
      i = end + 2;
    } else if (subset.startsWith("<!ENTITY", i)) {
      const end = declarationEnd(subset, i + 8);
      const declaration = subset.slice(i, end);
      if (/^<!ENTITY\s+%/.test(declaration)) {
        throw refuse("declares a parameter entity (<!ENTITY %); refused");
      }
      if (/^<!ENTITY\s+\S+\s+(?:SYSTEM|PUBLIC)\b/.test(declaration)) {
        throw refuse(
          "declares an external entity (SYSTEM or PUBLIC); external entities are how XXE attacks read files and reach hosts",
        );
      }
      const m = ENTITY_DECLARATION.exec(declaration);
      if (!m) throw refuse(`has an entity declaration we do not read: ${declaration.slice(0, 80)}`);
      const name = m[1] as string;
      // XML: the first declaration of a name binds; later ones are ignored
      if (!values.has(name)) values.set(name, entityText(name, m[2] ?? m[3] ?? ""));
      if (values.size > MAX_DECLARATIONS) {
        throw refuse(`declares more than ${MAX_DECLARATIONS} entities`);
      }
      i = end;
    } else if (/^<!(?:ELEMENT|ATTLIST|NOTATION)\s/.test(subset.slice(i, i + 11))) {
      i = declarationEnd(subset, i + 2); // structure only: nothing here is read
    } else if (subset[i] === "%") {
      throw refuse("refers to a parameter entity (%); refused");
    } else {
      throw refuse(
        `internal subset holds something that is not a declaration: ${subset.slice(i, i + 40)}`,
      );
    }
  }
}

/** The internal subset (between `[` and `]`) of the DOCTYPE at [start, end), or undefined. */
function internalSubset(text: string, start: number, end: number): string | undefined {
  let quote = "";
  for (let i = start + 9; i < end; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === "[") {
      const close = text.lastIndexOf("]", end);
      return close > i ? text.slice(i + 1, close) : undefined;
    }
  }
  return undefined;
}

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

export interface Prolog {
  /** Where the root element starts. */
  end: number;
  /** The DOCTYPE's plain-text entities, when it declares any. */
  entities?: DeclaredEntities;
}

/**
 * Reads the prolog (XML declaration, comments, processing instructions, DOCTYPE) up to the
 * root element: throws FeedParseError for dangerous declarations (see the top of this file),
 * and returns the plain-text entities the DOCTYPE declares.
 */
export function readProlog(text: string): Prolog {
  const values = new Map<string, string>();
  let i = 0;
  for (;;) {
    while (i < text.length && /\s/.test(text[i] ?? "")) i++;
    if (text.startsWith("<?", i) || text.startsWith("<!--", i)) {
      const close = text.startsWith("<?", i) ? "?>" : "-->";
      const end = text.indexOf(close, i + 2);
      if (end === -1) return { end: text.length };
      i = end + close.length;
    } else if (text.slice(i, i + 9).toUpperCase() === "<!DOCTYPE") {
      const end = doctypeEnd(text, i);
      const subset = internalSubset(text, i, end);
      if (subset !== undefined) readSubset(subset, values);
      i = end;
    } else {
      if (values.size === 0) return { end: i };
      return { end: i, entities: { values, budget: { left: MAX_EXPANSION_CHARS } } };
    }
  }
}
