import { decodeHTMLStrict, decodeXML } from "entities";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { type OpmlProblem, problem } from "./problems";

/**
 * OPML 1.0 / 2.0 as feed readers export it (Feedly, Inoreader, Miniflux, NewsBlur, FreshRSS):
 * a <body> of <outline>s, where an outline with an xmlUrl is a feed and one without that holds
 * outlines is a folder. Pure: text in, feeds and problems out, each with its line number.
 */

export interface OpmlFeed {
  /** 1-based line where the outline starts. */
  line: number;
  /** xmlUrl as written (entities decoded, trimmed); checked by planImport, not here. */
  xmlUrl: string;
  htmlUrl?: string;
  title?: string;
  text?: string;
  /** The outline's type attribute ("rss" in every reader's export, Atom feeds included). */
  type?: string;
  /** The names of the folders it is nested in, outermost first. */
  folder: string[];
  /** OPML 2.0's category attribute: comma-separated, slash-delimited ("/Tech/Linux,news"). */
  categories: string[];
}

export interface OpmlDocument {
  /** False when nothing could be read (malformed XML, entities, not OPML): `feeds` is empty. */
  readable: boolean;
  version: string | null;
  title: string | null;
  feeds: OpmlFeed[];
  problems: OpmlProblem[];
}

// fast-xml-parser stops at this depth with an error of its own (its default is 100 too); the
// readers' exports nest two to four levels, so anything near it is a made-up file.
const MAX_DEPTH = 100;

// Outline line numbers come from fast-xml-parser's captureMetaData: the start offset of every
// element, in the original text (its CR LF normalisation is accounted for), from the same pass
// that builds the tree. A pre-scan with a regex for "<outline" would be a second reader of the
// XML that can disagree with the first (an outline inside a comment or CDATA, a ">" inside an
// attribute value); the parser's own offsets cannot.
const parser = new XMLParser({
  preserveOrder: true,
  captureMetaData: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  // Entities are decoded here, once, with `entities` (the five XML ones and numeric references;
  // HTML names in titles, as Miniflux reads them): fast-xml-parser then never expands a DOCTYPE
  // entity, whatever the prolog check below might miss.
  processEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  maxNestedTags: MAX_DEPTH,
});
const META = XMLParser.getMetaDataSymbol() as unknown as symbol;

type Node = Record<string, unknown>;

/** Start offset of each line, for offset → line by binary search. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

function lineAt(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] ?? 0) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

const unreadable = (p: OpmlProblem): OpmlDocument => ({
  readable: false,
  version: null,
  title: null,
  feeds: [],
  problems: [p],
});

// OPML has no use for a DOCTYPE's internal subset: no reader writes one, and every entity an
// export uses is one of XML's five or a numeric reference. So any internal subset (where entity
// declarations live: billion laughs, quadratic blowup, XXE) is refused before anything parses
// the text, as is a DOCTYPE after the root has started. This is stricter than the feed parser
// (workers/parser/hostile.ts, which is to accept plain-text declarations that real feeds use)
// and kept here on purpose, so a change of the feed parser's policy does not widen this one. A
// DOCTYPE without a subset is harmless: nothing here ever fetches a DTD.

/** Index of the root element's "<": past the declaration, comments, PIs and the DOCTYPE. */
function rootStart(text: string): number {
  let i = 0;
  for (;;) {
    while (i < text.length && /\s/.test(text[i] as string)) i++;
    const close = text.startsWith("<?", i)
      ? "?>"
      : text.startsWith("<!--", i)
        ? "-->"
        : /^<!DOCTYPE/i.test(text.slice(i, i + 9))
          ? doctypeClose(text, i)
          : null;
    if (close === null) return i;
    const end = text.indexOf(close, i + 2);
    if (end === -1) return text.length;
    i = end + close.length;
  }
}

/** What ends the DOCTYPE at `at`: "]>" after an internal subset, else ">". */
function doctypeClose(text: string, at: number): string {
  const gt = text.indexOf(">", at);
  const bracket = text.indexOf("[", at);
  return bracket !== -1 && (gt === -1 || bracket < gt) ? "]>" : ">";
}

function entityProblem(text: string, starts: number[]): OpmlProblem | null {
  const root = rootStart(text);
  const doctype = text.slice(0, root).search(/<!DOCTYPE/i);
  if (doctype !== -1 && doctypeClose(text, doctype) === "]>") {
    const declaration = text.slice(doctype, root).search(/<!ENTITY/i);
    return problem(
      lineAt(starts, declaration === -1 ? doctype : doctype + declaration),
      "entity_declaration",
      "the DOCTYPE has an internal subset (entity declarations); OPML never needs one, and entity declarations are how billion-laughs and XXE attacks work",
    );
  }
  const late = text.slice(root).search(/<!DOCTYPE/i);
  if (late !== -1) {
    return problem(
      lineAt(starts, root + late),
      "entity_declaration",
      "a DOCTYPE inside the document; OPML has none there",
    );
  }
  return null;
}

/** The validator's complaint in words, at its line. */
function malformed(starts: number[], err: XMLValidatorError): OpmlProblem {
  // With several elements left open the validator names them but says "line 1"; the file in
  // fact ends too early, so the last line is where reading failed.
  const open = /^Invalid '(\[.*\])' found\.$/.exec(err.msg);
  if (open?.[1]) {
    const names = (JSON.parse(open[1]) as string[]).map((n) => `<${n}>`).join(", ");
    return problem(
      starts.length,
      "malformed_xml",
      `not well-formed XML: the file ends with ${names} still open`,
    );
  }
  const col = err.col ? `, column ${err.col}` : "";
  return problem(err.line, "malformed_xml", `not well-formed XML (${err.code}${col}): ${err.msg}`);
}

interface XMLValidatorError {
  code: string;
  msg: string;
  line: number;
  col?: number;
}

/**
 * Where elements first nest deeper than `max`, by a light scan of tags (comments, CDATA and
 * processing instructions skipped). Only for the message when the parser refused the depth: the
 * parser gives no position for it.
 */
function lineOfDepth(text: string, starts: number[], max: number): number {
  const tag =
    /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<[?!][^>]*>|<(\/?)[^\s/>]+(?:"[^"]*"|'[^']*'|[^'">])*?(\/?)>/g;
  let depth = 0;
  for (let m = tag.exec(text); m; m = tag.exec(text)) {
    if (m[1] === undefined) continue; // comment, CDATA, PI, DOCTYPE
    if (m[1] === "/") depth--;
    else if (m[2] !== "/" && ++depth > max) return lineAt(starts, m.index);
  }
  return starts.length;
}

function elementName(node: Node): string | undefined {
  return Object.keys(node).find((k) => k !== ":@");
}

/** The nodes inside an element (preserveOrder keeps them under the element's own name). */
function childNodes(node: Node): Node[] {
  const name = elementName(node);
  const value = name === undefined ? undefined : node[name];
  return Array.isArray(value) ? (value as Node[]) : [];
}

function childElements(node: Node, name: string): Node[] {
  return childNodes(node).filter((n) => elementName(n) === name);
}

/** Attribute names compared without case: old exporters wrote xmlurl and htmlurl. */
function attributes(node: Node): Map<string, string> {
  const raw = (node[":@"] ?? {}) as Record<string, unknown>;
  const attrs = new Map<string, string>();
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v === "string") attrs.set(k.toLowerCase(), v);
  }
  return attrs;
}

/** A label: HTML entity names decoded (Feedly writes &nbsp; and &#39; in titles), spaces collapsed. */
function label(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const text = decodeHTMLStrict(raw).replace(/\s+/g, " ").trim();
  return text || undefined;
}

/** A URL: only XML's entities and numeric references (an & before "copy=1" stays an &). */
function urlValue(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  return decodeXML(raw).trim();
}

function textOf(node: Node | undefined): string | null {
  if (!node) return null;
  const parts = childNodes(node)
    .map((c) => c["#text"])
    .filter((t): t is string => typeof t === "string");
  return label(parts.join(" ")) ?? null;
}

/** "/Tech/Linux, news" → ["Tech/Linux", "news"]. */
function categoriesOf(raw: string | undefined): string[] {
  if (!raw) return [];
  return raw
    .split(",")
    .map((c) => c.trim().replace(/^\/+|\/+$/g, ""))
    .filter(Boolean);
}

export function parseOpml(input: string): OpmlDocument {
  const text = input.replace(/^\uFEFF/, "");
  const starts = lineStarts(text);

  const hostile = entityProblem(text, starts);
  if (hostile) return unreadable(hostile);

  const valid = XMLValidator.validate(text);
  if (valid !== true) return unreadable(malformed(starts, valid.err as XMLValidatorError));

  let tree: Node[];
  try {
    tree = parser.parse(text) as Node[];
  } catch (err) {
    if (/nested tags/i.test((err as Error).message)) {
      return unreadable(
        problem(
          lineOfDepth(text, starts, MAX_DEPTH),
          "too_deep",
          `elements nest more than ${MAX_DEPTH} levels deep here; no reader exports that`,
        ),
      );
    }
    return unreadable(problem(1, "malformed_xml", `not readable XML: ${(err as Error).message}`));
  }

  const lineOf = (node: Node) => {
    const meta = node[META as unknown as string] as { startIndex?: number } | undefined;
    return lineAt(starts, meta?.startIndex ?? 0);
  };
  const root = tree.find((n) => {
    const name = elementName(n);
    return name !== undefined && !name.startsWith("?") && !name.startsWith("#");
  });
  const rootName = root && elementName(root);
  if (!root || rootName !== "opml") {
    return unreadable(
      problem(
        root ? lineOf(root) : 1,
        "not_opml",
        rootName ? `the root element is <${rootName}>, not <opml>` : "there is no root element",
      ),
    );
  }
  const version = attributes(root).get("version") ?? null;
  const head = childElements(root, "head")[0];
  const body = childElements(root, "body")[0];
  if (!body) return unreadable(problem(lineOf(root), "not_opml", "<opml> has no <body>"));

  const feeds: OpmlFeed[] = [];
  const problems: OpmlProblem[] = [];
  // Outlines are at most MAX_DEPTH deep (the parser refused deeper), so recursion is bounded.
  const walk = (nodes: Node[], folder: string[]) => {
    for (const node of nodes) {
      if (elementName(node) !== "outline") continue; // other elements (a reader's settings) are not ours
      const attrs = attributes(node);
      const line = lineOf(node);
      const title = label(attrs.get("title"));
      const textAttr = label(attrs.get("text"));
      const xmlUrl = urlValue(attrs.get("xmlurl"));
      const inner = childElements(node, "outline");
      if (xmlUrl) {
        feeds.push({
          line,
          xmlUrl,
          htmlUrl: urlValue(attrs.get("htmlurl")) || undefined,
          title,
          text: textAttr,
          type: attrs.get("type"),
          folder,
          categories: categoriesOf(label(attrs.get("category"))),
        });
        // A feed outline with outlines inside is not something readers write; its children are
        // read as if it were their folder too, rather than silently dropped.
        if (inner.length > 0) walk(inner, [...folder, title ?? textAttr ?? xmlUrl]);
      } else if (inner.length > 0) {
        walk(inner, [...folder, title ?? textAttr ?? `(untitled folder, line ${line})`]);
      } else {
        const name = title ?? textAttr;
        problems.push(
          problem(
            line,
            "not_a_feed",
            attrs.has("xmlurl")
              ? `outline${name ? ` "${name}"` : ""} has an empty xmlUrl`
              : `outline${name ? ` "${name}"` : ""} has no xmlUrl and holds no outlines: neither a feed nor a folder`,
          ),
        );
      }
    }
  };
  walk(childNodes(body), []);

  return {
    readable: true,
    version,
    title: head ? textOf(childElements(head, "title")[0]) : null,
    feeds,
    problems,
  };
}
