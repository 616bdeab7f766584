import fc from "fast-check";
import { XMLParser } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { FeedParseError } from "./errors";
import { USUAL_PREFIXES } from "./namespaces";
import { resolveUrl } from "./urls";
import { parseXml, textOf, type XmlElement, type XmlNode } from "./xmlTree";

// xmlTree.ts replaced fast-xml-parser (decision 018) and promises to read documents as it did,
// leniency included, because the corpora's agreement was measured on that reading. So
// fast-xml-parser, configured as wirewatch used it, is the oracle here: random documents made of
// well- and ill-formed pieces must give the same tree, or both be refused.

const oracle = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  maxNestedTags: 256,
  htmlEntities: false,
});

type FxpNode = Record<string, unknown> & { ":@"?: Record<string, string> };
const XML_NS = "http://www.w3.org/XML/1998/namespace";

/** fast-xml-parser's ordered tree as elements, the way wirewatch converted it. */
function convert(node: FxpNode, prefixes: Record<string, string>, base?: string): XmlNode | null {
  const attrs = { ...(node[":@"] ?? {}) };
  const name = Object.keys(node).find((k) => k !== ":@");
  if (name === undefined) return null;
  if (name === "#text") return String(node[name] ?? "");
  const scope = { ...prefixes };
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "xmlns") scope[""] = v.trim();
    else if (k.startsWith("xmlns:")) scope[k.slice(6)] = v.trim();
  }
  const xmlBase = attrs["xml:base"];
  const elBase = xmlBase !== undefined ? (resolveUrl(xmlBase, base) ?? base) : base;
  const colon = name.indexOf(":");
  const prefix = colon === -1 ? "" : name.slice(0, colon);
  const children = ((node[name] as FxpNode[] | undefined) ?? [])
    .map((c) => convert(c, scope, elBase))
    .filter((c): c is XmlNode => c !== null);
  return {
    ns: scope[prefix] ?? USUAL_PREFIXES[prefix] ?? "",
    local: colon === -1 ? name : name.slice(colon + 1),
    attrs,
    children,
    base: elBase,
  };
}

/** Elements as plain data (attribute maps without prototype compared by content). */
function plain(node: XmlNode): unknown {
  if (typeof node === "string") return node;
  return { ...node, attrs: { ...node.attrs }, children: node.children.map(plain) };
}

/** The oracle's reading with parseXml's rules at the top: text there is refused, first element wins. */
function viaOracle(doc: string, base: string): unknown {
  const top = (oracle.parse(doc) as FxpNode[]).map((n) => convert(n, { xml: XML_NS }, base));
  if (top.some((n) => typeof n === "string" && n.trim())) return "refused";
  const first = top.find((n): n is XmlElement => n !== null && typeof n !== "string");
  return first ? plain(first) : "refused";
}

const PIECES = [
  "<a>",
  "</a>",
  "<b x='1' y=\"&amp;&lt;\">",
  "</b>",
  "<c/>",
  "<br />",
  "<d e=f g='2'/>",
  "<atom:link href='/x'/>",
  "<p:q xmlns:p='urn:p'>",
  "</p:q>",
  "<i xml:base='/dir/'>",
  "</i>",
  "<j xmlns='urn:j'>",
  "</j >",
  "<k l='>'>",
  "<m\n n='3'>",
  '<e == "="\tx:y"v">',
  "</e>",
  "<f\ta='1'\tb=\"\t2\" c = 'x'/>",
  "</m>",
  "text",
  " ",
  "\r\n",
  "\t",
  "&amp;",
  "&lt;b&gt;",
  "&amp;lt;",
  "&#38;",
  "&#1;",
  "&copy;",
  "&",
  ";",
  "<!-- note -->",
  "<![CDATA[<x>&amp;]]>",
  "<![CDATA[]]>",
  "<?pi data?>",
];

describe("parseXml reads documents as fast-xml-parser did", () => {
  it("gives the same tree for random documents, or both refuse them", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 14 }), (pieces) => {
        const doc = `<rss>${pieces.join("")}</rss>`;
        let expected: unknown;
        try {
          expected = viaOracle(doc, "http://ex.com/feed");
        } catch {
          expected = "refused";
        }
        let actual: unknown;
        try {
          actual = plain(parseXml(doc, "http://ex.com/feed"));
        } catch (err) {
          expect(err).toBeInstanceOf(FeedParseError);
          actual = "refused";
        }
        expect(actual).toEqual(expected);
      }),
      { numRuns: 3_000 },
    );
  });
});

describe("parseXml", () => {
  it("decodes the five XML entities once and leaves the rest for text.ts", () => {
    const root = parseXml("<t>&amp;lt; &lt;b&gt; &quot;&apos; &#38; &eacute; &#1;x</t>");
    expect(textOf(root)).toBe(`&lt; <b> "' &#38; &eacute; x`);
  });

  it("never expands a declared entity, even without hostile.ts in front", () => {
    const root = parseXml(`<!DOCTYPE t [<!ENTITY a "${"z".repeat(100)}">]><t>&a;&a;</t>`);
    expect(textOf(root)).toBe("&a;&a;");
  });

  it("refuses a DOCTYPE once the root has started", () => {
    expect(() => parseXml("<t><!doctype html><x/></t>")).toThrow(/DOCTYPE appears after/);
  });

  it("stops at 256 levels", () => {
    expect(() => parseXml(`${"<x>".repeat(256)}${"</x>".repeat(256)}`)).not.toThrow();
    expect(() => parseXml(`${"<x>".repeat(257)}${"</x>".repeat(257)}`)).toThrow(
      /nest deeper than 256/,
    );
  });
});
