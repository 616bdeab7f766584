import { toIsoDate } from "./dates";
import { finishEntry } from "./entry";
import { alternateLink } from "./links";
import { NS } from "./namespaces";
import { innerMarkup, markupToText, plainText, titleText } from "./text";
import type { EntryFields, ParsedEntry, ParsedFeed } from "./types";
import { child, childrenNamed, elements, textOf, type XmlElement } from "./xmlTree";

// Atom 1.0 and 0.3 differ in names (modified/issued vs updated/published) and in how content is
// marked (0.3's mode="escaped|base64|xml"); the reader is given the namespace the document uses.

/** Base64 that decodes to UTF-8 text, else undefined (an unknown type holding plain text). */
function fromBase64(raw: string): string | undefined {
  const compact = raw.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(compact) || compact.length % 4 !== 0) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(compact, "base64"));
  } catch {
    return undefined;
  }
}

/**
 * A text construct as plain text, whatever its type (text, html, xhtml) or 0.3 mode; titles
 * read with titleText (escaped markup that is not HTML stays literal), summaries with plainText.
 */
function textConstruct(el: XmlElement | undefined, field: "title" | "summary"): string {
  const toText = field === "title" ? titleText : plainText;
  if (!el) return "";
  const type = (el.attrs.type ?? "").toLowerCase();
  // RFC 4287 §4.1.3.3: a type that is neither text, HTML, XHTML, XML nor text/* means base64;
  // Atom 0.3 says so with mode="base64".
  const binary =
    type !== "" &&
    !["text", "html", "xhtml"].includes(type) &&
    !type.startsWith("text/") &&
    !/[+/]xml$/.test(type);
  if (el.attrs.mode === "base64" || binary) {
    const decoded = fromBase64(textOf(el));
    if (decoded !== undefined) return toText(decoded);
  }
  if (type.includes("xhtml") || elements(el).length > 0) {
    // XHTML's elements are markup whatever their names; what they hold is read as above
    return field === "title"
      ? titleText(markupToText(innerMarkup(el)))
      : plainText(innerMarkup(el));
  }
  return toText(textOf(el));
}

function date(el: XmlElement, ns: string, names: string[]): string | undefined {
  for (const name of names) {
    for (const found of childrenNamed(el, ns, name)) {
      const iso = toIsoDate(textOf(found));
      if (iso) return iso;
    }
  }
  return undefined;
}

// Dublin Core terms stand in when Atom's own dates are missing (feeds converted from RDF write
// dcterms:issued / dcterms:modified); Atom's own win when both are there.
const PUBLISHED = ["published", "issued", "created"];
const UPDATED = ["updated", "modified"];
const DC_PUBLISHED = ["issued", "created"];
const DC_UPDATED = ["modified"];

const published = (el: XmlElement, ns: string) =>
  date(el, ns, PUBLISHED) ?? date(el, NS.dcterms, DC_PUBLISHED);
const updated = (el: XmlElement, ns: string) =>
  date(el, ns, UPDATED) ?? date(el, NS.dcterms, DC_UPDATED);

/** Every author's name (or address when nameless), joined with ", " as a byline would be. */
function authorName(el: XmlElement | undefined, ns: string): string | undefined {
  if (!el) return undefined;
  const names = childrenNamed(el, ns, "author").map(
    (author) =>
      plainText(textOf(child(author, ns, "name"))) || plainText(textOf(child(author, ns, "email"))),
  );
  return [...new Set(names.filter(Boolean))].join(", ") || undefined;
}

function categories(entry: XmlElement, ns: string): string[] {
  const found = [
    ...childrenNamed(entry, ns, "category").map((c) =>
      plainText(c.attrs.term ?? c.attrs.label ?? textOf(c)),
    ),
    ...childrenNamed(entry, NS.dc, "subject").map((c) => plainText(textOf(c))),
  ];
  return [...new Set(found.filter(Boolean))];
}

/** An entry's fields; its author falls back to the feed's only in finishAtomEntry. */
export function atomEntryFields(entry: XmlElement, ns: string): EntryFields {
  const id = textOf(child(entry, ns, "id")).trim();
  return {
    atomId: id || undefined,
    title: textConstruct(child(entry, ns, "title"), "title"),
    link: alternateLink(childrenNamed(entry, ns, "link")),
    published: published(entry, ns),
    updated: updated(entry, ns),
    summary:
      textConstruct(child(entry, ns, "summary"), "summary") ||
      textConstruct(child(entry, ns, "content"), "summary") ||
      undefined,
    // RFC 4287 §4.2.1: an entry without an author inherits its source's, then the feed's.
    author: authorName(entry, ns) ?? authorName(child(entry, ns, "source"), ns),
    categories: categories(entry, ns),
  };
}

export function finishAtomEntry(fields: EntryFields, feedAuthor: string | undefined): ParsedEntry {
  return finishEntry(fields.author || !feedAuthor ? fields : { ...fields, author: feedAuthor });
}

/** The entries of an Atom feed: `<entry>` children of the root, in the root's namespace. */
export function isAtomEntry(el: XmlElement, parent: XmlElement, root: XmlElement): boolean {
  return parent === root && el.local === "entry" && el.ns === root.ns;
}

export function readAtom(
  root: XmlElement,
  streamed: EntryFields[] = [],
): Omit<ParsedFeed, "format"> {
  const ns = root.ns;
  const id = textOf(child(root, ns, "id")).trim();
  const feedAuthor = authorName(root, ns);
  const fields = [
    ...streamed,
    ...childrenNamed(root, ns, "entry").map((e) => atomEntryFields(e, ns)),
  ];
  return {
    feed: {
      title: textConstruct(child(root, ns, "title"), "title"),
      link: alternateLink(childrenNamed(root, ns, "link")),
      id: id || undefined,
      updated: updated(root, ns),
    },
    entries: fields.map((f) => finishAtomEntry(f, feedAuthor)),
  };
}
