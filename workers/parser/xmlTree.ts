import { XMLParser } from "fast-xml-parser";
import { FeedParseError } from "./errors";
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

// Real feeds nest 5–10 levels, Atom XHTML content perhaps 30; 256 is generous, and low enough
// that neither the parser nor our recursive walks come near Node's stack (10,000-deep input
// otherwise overflows it inside fast-xml-parser).
const MAX_DEPTH = 256;

// The five XML entities only; numeric references and HTML names (&eacute;) are left for
// text.ts, which also handles them when double-escaped. Declared entities never get here
// (hostile.ts), but the limits stay on as a second line for them: 64 declarations of ≤ 1 KB,
// 10,000 expansions, 1 MB expanded. appliesTo "external" keeps the five built-ins out of the
// count, or a real feed with 100k `&amp;` would hit it (fast-xml-parser 5.12.1 reads the option;
// its .d.ts does not list it yet).
const ENTITY_LIMITS = {
  enabled: true,
  maxEntityCount: 64,
  maxEntitySize: 1024,
  maxExpansionDepth: 4,
  maxTotalExpansions: 10_000,
  maxExpandedLength: 1_000_000,
  appliesTo: "external",
};

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  maxNestedTags: MAX_DEPTH,
  processEntities: ENTITY_LIMITS,
  htmlEntities: false,
});

type FxpNode = Record<string, unknown> & { ":@"?: Record<string, string> };

interface Scope {
  prefixes: Record<string, string>;
  base?: string;
}

function splitName(name: string): [prefix: string, local: string] {
  const i = name.indexOf(":");
  return i === -1 ? ["", name] : [name.slice(0, i), name.slice(i + 1)];
}

function convert(node: FxpNode, parent: Scope): XmlNode | undefined {
  const attrs = node[":@"] ?? {};
  const name = Object.keys(node).find((k) => k !== ":@");
  if (name === undefined) return undefined;
  if (name === "#text") return String(node[name] ?? "");
  const prefixes = { ...parent.prefixes };
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "xmlns") prefixes[""] = v.trim();
    else if (k.startsWith("xmlns:")) prefixes[k.slice(6)] = v.trim();
  }
  const xmlBase = attrs["xml:base"];
  const base =
    xmlBase !== undefined ? (resolveUrl(xmlBase, parent.base) ?? parent.base) : parent.base;
  const [prefix, local] = splitName(name);
  const scope = { prefixes, base };
  const rawChildren = (node[name] as FxpNode[] | undefined) ?? [];
  const children: XmlNode[] = [];
  for (const child of rawChildren) {
    const converted = convert(child, scope);
    if (converted !== undefined) children.push(converted);
  }
  return { ns: prefixes[prefix] ?? USUAL_PREFIXES[prefix] ?? "", local, attrs, children, base };
}

const XML_NS = "http://www.w3.org/XML/1998/namespace";

/** Parses well-enough-formed XML into a tree; throws FeedParseError for what is not XML. */
export function parseXml(text: string, baseUrl?: string): XmlElement {
  let top: FxpNode[];
  try {
    top = parser.parse(text) as FxpNode[];
  } catch (err) {
    const message = (err as Error).message;
    if (/nested tags/i.test(message)) {
      throw new FeedParseError(`elements nest deeper than ${MAX_DEPTH} levels`);
    }
    throw new FeedParseError(`not well-formed XML: ${message}`);
  }
  let root: XmlElement | undefined;
  let rootName = "";
  for (const node of top) {
    const converted = convert(node, { prefixes: { xml: XML_NS }, base: baseUrl });
    if (typeof converted === "string") {
      if (converted.trim()) throw new FeedParseError("not XML: text outside the root element");
    } else if (converted && !root) {
      root = converted;
      rootName = Object.keys(node).find((k) => k !== ":@") ?? "";
    }
  }
  if (!root) throw new FeedParseError("not XML: no root element");
  if (!closesRoot(text, root, rootName)) {
    throw new FeedParseError(`the document ends before </${rootName}> (truncated?)`);
  }
  return root;
}

// fast-xml-parser accepts a document that stops mid-element, which is what a body cut off by
// the size cap or a dropped connection looks like; its last entry would be half an entry. So the
// root's end tag must be there, unless the root closed itself (`<rss/>`). Junk after the end tag
// is ignored, as Go's decoder (gofeed, miniflux) ignores it.
function closesRoot(text: string, root: XmlElement, rootName: string): boolean {
  if (root.children.length === 0 && /\/>\s*$/.test(text.slice(-4096))) return true;
  return new RegExp(`</${rootName.replace(/[.]/g, "\\.")}\\s*>`).test(text);
}

/** All text inside an element, tags dropped, in document order. */
export function textOf(el: XmlElement | undefined): string {
  if (!el) return "";
  return el.children.map((c) => (typeof c === "string" ? c : textOf(c))).join("");
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
  const spaces = typeof ns === "string" ? [ns] : ns;
  return elements(el).filter((c) => c.local === local && spaces.includes(c.ns));
}

export function child(
  el: XmlElement,
  ns: string | readonly string[],
  local: string,
): XmlElement | undefined {
  return childrenNamed(el, ns, local)[0];
}
