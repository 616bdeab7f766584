import { FeedParseError } from "./errors";
import { type DeclaredEntities, doctypeEnd, MAX_EXPANSION_CHARS } from "./hostile";
import { USUAL_PREFIXES } from "./namespaces";
import { resolveUrl } from "./urls";

/**
 * An element with its namespace resolved and its xml:base worked out, so feed readers can ask
 * for "atom:link" whatever prefix the document chose.
 */
export interface XmlElement {
  /** Namespace URI, "" when none. */
  ns: string;
  local: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  /** Absolute base URL in scope (xml:base chain over the feed URL), when one is known. */
  base?: string;
}
export type XmlNode = XmlElement | string;

// One pass over the text builds the elements directly: no token objects, no intermediate tree
// (decision 018: fast-xml-parser with preserveOrder plus a conversion was half or more of a
// 5,000-item parse, 262–401 ms of 6 MB; this reads the same text in 45–65 ms). The reading is as lenient as fast-xml-parser's was, which the corpora
// were checked against: an end tag closes the innermost open element whatever its name, text
// outside the root before it is dropped, attributes without a quoted value are ignored, and
// CR LF / CR become LF. Only the five XML entities are decoded (once, here); numeric references
// and HTML names stay for text.ts and links.ts, which also handle them double-escaped. A
// DOCTYPE before the root is skipped unread (its declarations are never expanded, so nothing
// here can blow up or fetch anything; hostile.ts refuses them earlier anyway), one after the
// root started is refused.

// Real feeds nest 5–10 levels, Atom XHTML content perhaps 30; 256 is generous, and low enough
// that our recursive walks (textOf, innerMarkup) stay far from Node's stack.
const MAX_DEPTH = 256;
// fast-xml-parser looked at most this far for an entity's ";" and kept "&" literal beyond it.
const ENTITY_WINDOW = 32;

const XML_NS = "http://www.w3.org/XML/1998/namespace";
const SPACE = /\s/;

/**
 * The namespace of a prefix the document never declared: its usual one (`atom:`, `dc:`,
 * `itunes:`, in any case: `ITUNES:AUTHOR` is in the wild), else the prefix itself, as Go's
 * decoder (gofeed, miniflux) reads it. Not "": an undeclared `media:title` is not RSS's title.
 */
function undeclaredPrefix(prefix: string): string {
  return USUAL_PREFIXES[prefix] ?? USUAL_PREFIXES[prefix.toLowerCase()] ?? prefix;
}

/** What /\s/ matches, without a regex call for the ASCII letters of a name. */
function isSpace(c: number): boolean {
  if (c > 32 && c < 128) return false;
  return c === 32 || (c >= 9 && c <= 13) || SPACE.test(String.fromCharCode(c));
}

type Prefixes = Record<string, string>;

interface Frame {
  el: XmlElement;
  prefixes: Prefixes;
}

function notWellFormed(what: string): FeedParseError {
  return new FeedParseError(`not well-formed XML: ${what}`);
}

/** A numeric reference XML forbids (NUL, a surrogate, C0 but tab/LF/CR) is dropped; others stay. */
function forbiddenRef(token: string): boolean {
  const hex = token.charCodeAt(1) === 120 || token.charCodeAt(1) === 88;
  const cp = Number.parseInt(token.slice(hex ? 2 : 1), hex ? 16 : 10);
  if (Number.isNaN(cp)) return false;
  return (cp >= 0xd800 && cp <= 0xdfff) || (cp < 0x20 && cp !== 9 && cp !== 10 && cp !== 13);
}

const NAMED: Record<string, string> = Object.assign(Object.create(null), {
  lt: "<",
  gt: ">",
  amp: "&",
  apos: "'",
  quot: '"',
});

/** The five XML entities decoded, left to right and once (`&amp;lt;` is `&lt;`). */
export function decodeXml(raw: string): string {
  if (!raw.includes("&")) return raw;
  return raw.includes("&#") && hasForbiddenRef(raw) ? decodeInOrder(raw) : decodeNamed(raw);
}

// Native replacements, `&amp;` last so that what it produces is not read again: the same
// result as one pass from the left, as long as no reference is dropped (hasForbiddenRef).
// Escaped HTML descriptions carry hundreds of `&lt;`; building those strings piece by piece
// was most of the parse's garbage.
function decodeNamed(raw: string): string {
  let s = raw;
  if (s.includes("&lt;")) s = s.replaceAll("&lt;", "<");
  if (s.includes("&gt;")) s = s.replaceAll("&gt;", ">");
  if (s.includes("&quot;")) s = s.replaceAll("&quot;", '"');
  if (s.includes("&apos;")) s = s.replaceAll("&apos;", "'");
  if (s.includes("&amp;")) s = s.replaceAll("&amp;", "&");
  return s;
}

/** Where the ";" closing the reference at `amp` is, or -1 beyond the window (then "&" is literal). */
function refEnd(raw: string, amp: number): number {
  const limit = Math.min(raw.length, amp + ENTITY_WINDOW + 2);
  let semi = amp + 1;
  while (semi < limit && raw.charCodeAt(semi) !== 59) semi++;
  return semi === limit || semi === amp + 1 ? -1 : semi;
}

function hasForbiddenRef(raw: string): boolean {
  for (let at = raw.indexOf("&#"); at !== -1; at = raw.indexOf("&#", at + 1)) {
    const semi = refEnd(raw, at);
    if (semi !== -1 && forbiddenRef(raw.slice(at + 1, semi))) return true;
  }
  return false;
}

/**
 * decodeXml plus the plain-text entities a DOCTYPE declared (hostile.ts), each use counted
 * against the document's budget.
 */
function decodeWithEntities(raw: string, entities: DeclaredEntities): string {
  if (!raw.includes("&")) return raw;
  return decodeInOrder(raw, (name) => {
    const value = NAMED[name] ?? entities.values.get(name);
    if (value !== undefined && !(name in NAMED)) {
      entities.budget.left -= value.length;
      if (entities.budget.left < 0) {
        throw new FeedParseError(
          `the DOCTYPE's entities expand to more than ${MAX_EXPANSION_CHARS} characters (an expansion bomb?)`,
        );
      }
    }
    return value;
  });
}

function decodeInOrder(
  raw: string,
  named: (name: string) => string | undefined = (name) => NAMED[name],
): string {
  let out = "";
  let last = 0;
  for (let amp = raw.indexOf("&"); amp !== -1; ) {
    const semi = refEnd(raw, amp);
    const token = semi === -1 ? "" : raw.slice(amp + 1, semi);
    const value =
      token === ""
        ? undefined
        : token.charCodeAt(0) === 35
          ? forbiddenRef(token)
            ? ""
            : undefined
          : named(token);
    if (value === undefined) {
      amp = raw.indexOf("&", amp + 1);
      continue;
    }
    out += raw.slice(last, amp) + value;
    last = semi + 1;
    amp = raw.indexOf("&", last);
  }
  return last === 0 ? raw : out + raw.slice(last);
}

/** Index of the ">" ending the tag that starts at `from`, quoted values skipped; -1 if none. */
function tagClose(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 62) return i;
    if (c === 34 || c === 39) {
      i = text.indexOf(c === 34 ? '"' : "'", i + 1);
      if (i === -1) return -1;
    }
  }
  return -1;
}

function hasTab(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === 9) return true;
  return false;
}

/**
 * text[from, to) with each tab outside a quoted value made a space, as fast-xml-parser read a
 * tag before matching its attributes (it matters where its quotes and the attribute pattern's
 * pair differently); the same length, so offsets carry over.
 */
function untabbed(text: string, from: number, to: number): string {
  let out = "";
  let last = from;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 || c === 39) {
      i = text.indexOf(c === 34 ? '"' : "'", i + 1); // found: tagClose paired every quote
    } else if (c === 9) {
      out += `${text.slice(last, i)} `;
      last = i + 1;
    }
  }
  return out + text.slice(last, to);
}

/** `[^\s=]` */
const isNameChar = (c: number) => c !== 61 && !isSpace(c);

/**
 * The attributes in text[from, to), read as fast-xml-parser's
 * `/([^\s=]+)\s*(=\s*(?:"([^"]*)"|'([^']*)'))?/g` read them (a name without a quoted value is
 * skipped; the last of a repeated name wins), by hand: no substring per tag, no match arrays.
 */
function readAttributes(
  text: string,
  from: number,
  to: number,
  decode: (raw: string) => string,
): Record<string, string> | undefined {
  let attrs: Record<string, string> | undefined;
  let i = from;
  while (i < to) {
    if (!isNameChar(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    while (i < to && isNameChar(text.charCodeAt(i))) i++;
    const name = text.slice(start, i);
    while (i < to && isSpace(text.charCodeAt(i))) i++;
    if (i >= to || text.charCodeAt(i) !== 61) continue;
    let j = i + 1;
    while (j < to && isSpace(text.charCodeAt(j))) j++;
    const quote = text.charCodeAt(j);
    if (j < to && (quote === 34 || quote === 39)) {
      const close = text.indexOf(quote === 34 ? '"' : "'", j + 1);
      if (close !== -1 && close < to) {
        attrs ??= Object.create(null) as Record<string, string>;
        attrs[name] = decode(text.slice(j + 1, close));
        i = close + 1;
      }
    }
    // otherwise "=" starts no value: reading resumes at it, as the pattern's next match would
  }
  return attrs;
}

const NO_ATTRS: Record<string, string> = Object.freeze(Object.create(null));

/**
 * Called as each child and grandchild of the root is complete; returning true takes the element
 * out of the tree (it has been read, and its subtree can be collected while young).
 */
export type EntryReader = (el: XmlElement, parent: XmlElement, root: XmlElement) => boolean;

/**
 * Parses well-enough-formed XML into a tree; throws FeedParseError for what is not XML. With
 * `onEntry`, entries are read as they close instead of after the whole document is in memory;
 * with `entities` (hostile.ts, readProlog), references to them are expanded within its budget.
 */
export function parseXml(
  input: string,
  baseUrl?: string,
  onEntry?: EntryReader,
  entities?: DeclaredEntities,
): XmlElement {
  const text = input.includes("\r") ? input.replace(/\r\n?/g, "\n") : input;
  // documents without declarations (nearly all) keep the plain decoder
  const decode = entities ? (raw: string) => decodeWithEntities(raw, entities) : decodeXml;
  const top: XmlNode[] = [];
  const rootScope: Prefixes = Object.assign(Object.create(null), { xml: XML_NS });
  const stack: Frame[] = [];
  let el: XmlElement | undefined; // the innermost open element; undefined at the top level
  let prefixes = rootScope;
  let base = baseUrl;
  let rootName = "";
  let pending = ""; // raw text since the last tag, comments cut out, entities still encoded

  const offer = (done: XmlElement) => {
    const parent = el as XmlElement;
    if ((onEntry as EntryReader)(done, parent, (stack[0] as Frame).el)) parent.children.pop();
  };
  const flush = (into: XmlNode[]) => {
    if (pending) {
      const decoded = decode(pending);
      if (decoded) into.push(decoded);
      pending = "";
    }
  };

  let i = 0;
  const n = text.length;
  while (i < n) {
    const lt = text.indexOf("<", i);
    if (lt === -1) break; // text after the last tag belongs to no element: dropped
    if (lt > i) pending += text.slice(i, lt);
    const c1 = text.charCodeAt(lt + 1);
    if (c1 === 47) {
      // "/": closes the innermost open element, as fast-xml-parser read it (names unchecked)
      const gt = text.indexOf(">", lt + 2);
      if (gt === -1) throw notWellFormed("an end tag is not closed");
      flush(el ? el.children : top);
      const closed = stack.pop();
      const parent = stack[stack.length - 1];
      el = parent?.el;
      prefixes = parent?.prefixes ?? rootScope;
      base = parent ? parent.el.base : baseUrl;
      if (onEntry && closed && parent && stack.length <= 2) offer(closed.el);
      i = gt + 1;
    } else if (c1 === 63) {
      // "?": a processing instruction (or the XML declaration), ignored
      const end = text.indexOf("?>", lt + 2);
      if (end === -1) throw notWellFormed("a processing instruction is not closed");
      flush(el ? el.children : top);
      i = end + 2;
    } else if (c1 === 33 && text.startsWith("--", lt + 2)) {
      const end = text.indexOf("-->", lt + 4);
      if (end === -1) throw notWellFormed("a comment is not closed");
      i = end + 3;
    } else if (c1 === 33 && text.charCodeAt(lt + 2) === 91) {
      // "<![": CDATA, kept as it is written
      const end = text.indexOf("]]>", lt + 3);
      if (end === -1) throw notWellFormed("a CDATA section is not closed");
      flush(el ? el.children : top);
      (el ? el.children : top).push(text.slice(lt + 9, end));
      i = end + 3;
    } else if (c1 === 33 && text.slice(lt + 2, lt + 9).toUpperCase() === "DOCTYPE") {
      if (el || top.length > 0) {
        throw new FeedParseError(
          "a DOCTYPE appears after the root element started; XML forbids it",
        );
      }
      pending = "";
      i = doctypeEnd(text, lt);
    } else {
      const gt = tagClose(text, lt + 1);
      if (gt === -1) throw notWellFormed("a start tag is not closed");
      const selfClosing = text.charCodeAt(gt - 1) === 47 && gt - 1 > lt;
      let nameEnd = lt + 1;
      while (nameEnd < gt && !isSpace(text.charCodeAt(nameEnd))) nameEnd++;
      let name = text.slice(lt + 1, nameEnd);
      let attrs: Record<string, string> | undefined;
      if (selfClosing && name.endsWith("/")) {
        // `<a/>`; and fast-xml-parser dropped the attributes of `<a/ b="1"/>`, so do we
        name = name.slice(0, -1);
      } else if (nameEnd < gt) {
        const to = selfClosing ? gt - 1 : gt;
        attrs = hasTab(text, nameEnd, to)
          ? readAttributes(untabbed(text, lt + 1, gt), nameEnd - lt, to - lt - 1, decode)
          : readAttributes(text, nameEnd + 1, to, decode);
      }
      if (el) flush(el.children);
      pending = "";
      let scope = prefixes;
      let elBase = base;
      if (attrs) {
        for (const key in attrs) {
          if (key === "xmlns" || key.startsWith("xmlns:")) {
            if (scope === prefixes) scope = Object.assign(Object.create(null), prefixes);
            scope[key === "xmlns" ? "" : key.slice(6)] = (attrs[key] as string).trim();
          }
        }
        const xmlBase = attrs["xml:base"];
        if (xmlBase !== undefined) elBase = resolveUrl(xmlBase, base) ?? base;
      }
      const colon = name.indexOf(":");
      const prefix = colon === -1 ? "" : name.slice(0, colon);
      const child: XmlElement = {
        ns: scope[prefix] ?? (prefix ? undeclaredPrefix(prefix) : ""),
        local: colon === -1 ? name : name.slice(colon + 1),
        attrs: attrs ?? NO_ATTRS,
        children: [],
        base: elBase,
      };
      if (!el && !rootName) rootName = name || "?";
      (el ? el.children : top).push(child);
      if (selfClosing) {
        if (onEntry && el && stack.length <= 2) offer(child);
      } else {
        if (stack.length >= MAX_DEPTH) {
          throw new FeedParseError(`elements nest deeper than ${MAX_DEPTH} levels`);
        }
        stack.push({ el: child, prefixes: scope });
        el = child;
        prefixes = scope;
        base = elBase;
      }
      i = gt + 1;
    }
  }

  let root: XmlElement | undefined;
  for (const node of top) {
    if (typeof node === "string") {
      if (node.trim()) throw new FeedParseError("not XML: text outside the root element");
    } else if (!root) {
      root = node;
    }
  }
  if (!root) throw new FeedParseError("not XML: no root element");
  if (!closesRoot(text, root, rootName)) {
    throw new FeedParseError(`the document ends before </${rootName}> (truncated?)`);
  }
  return root;
}

// A document that stops mid-element is what a body cut off by the size cap or a dropped
// connection looks like; its last entry would be half an entry. So the root's end tag must be
// there, unless the root closed itself (`<rss/>`). Junk after the end tag is ignored, as Go's
// decoder (gofeed, miniflux) ignores it. Searched from the end, where it is.
function closesRoot(text: string, root: XmlElement, rootName: string): boolean {
  if (root.children.length === 0 && /\/>\s*$/.test(text.slice(-4096))) return true;
  const close = `</${rootName}`;
  for (let at = text.lastIndexOf(close); at !== -1; at = text.lastIndexOf(close, at - 1)) {
    if (/^\s*>/.test(text.slice(at + close.length, at + close.length + 64))) return true;
    if (at === 0) break;
  }
  return false;
}

/** All text inside an element, tags dropped, in document order. */
export function textOf(el: XmlElement | undefined): string {
  if (!el) return "";
  const kids = el.children;
  if (kids.length === 1 && typeof kids[0] === "string") return kids[0];
  let out = "";
  for (const c of kids) out += typeof c === "string" ? c : textOf(c);
  return out;
}

export function elements(el: XmlElement): XmlElement[] {
  return el.children.filter((c): c is XmlElement => typeof c !== "string");
}

/** Children named `local` in one of the namespaces `ns`. */
export function childrenNamed(
  el: XmlElement,
  ns: string | readonly string[],
  local: string,
): XmlElement[] {
  const out: XmlElement[] = [];
  for (const c of el.children) {
    if (typeof c === "string" || c.local !== local) continue;
    if (typeof ns === "string" ? c.ns === ns : ns.includes(c.ns)) out.push(c);
  }
  return out;
}

export function child(
  el: XmlElement,
  ns: string | readonly string[],
  local: string,
): XmlElement | undefined {
  for (const c of el.children) {
    if (typeof c === "string" || c.local !== local) continue;
    if (typeof ns === "string" ? c.ns === ns : ns.includes(c.ns)) return c;
  }
  return undefined;
}
