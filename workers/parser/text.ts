import { decodeHTML } from "entities";
import type { XmlElement, XmlNode } from "./xmlTree";

// Feeds put markup and entities in text fields at every level of escaping: raw XHTML, escaped
// HTML, CDATA holding escaped HTML, and entities escaped twice (`&amp;eacute;`). The XML parser
// has already undone one level; plainText undoes up to three more, stripping tags after each,
// and stops as soon as a pass changes nothing. The cost is that a title that really means the
// literal text "<b>" loses it; wirewatch shows titles as text, never as markup, so that is the
// right side to err on.

const MAX_PASSES = 3;
const BLOCK =
  /^(p|div|br|hr|li|ul|ol|h[1-6]|tr|td|th|table|blockquote|pre|section|article|header|footer|figure|figcaption|dd|dt|dl|img)$/i;
const DROPPED = /<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>|<!--[\s\S]*?-->/gi;
// biome-ignore lint/suspicious/noControlCharactersInRegex: XML forbids these C0 controls in text; some feeds carry them anyway
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;
const TAG = /<\/?([A-Za-z][A-Za-z0-9:-]*)(?:\s[^<>]*)?\/?>/g;

function stripTags(s: string): string {
  if (!s.includes("<")) return s;
  return s.replace(DROPPED, " ").replace(TAG, (_, name: string) => (BLOCK.test(name) ? " " : ""));
}

/** Text with tags removed, entities decoded (HTML names, numeric, double-escaped) and whitespace collapsed. */
export function plainText(raw: string): string {
  let text = raw;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const next = decodeHTML(stripTags(text));
    if (next === text) break;
    text = next;
  }
  return stripTags(text).replace(CONTROLS, "").replace(/\s+/g, " ").trim();
}

function escapeText(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** An element's content as markup again (text re-escaped), for XHTML content fed to plainText. */
export function innerMarkup(el: XmlElement): string {
  return el.children.map(nodeMarkup).join("");
}

function nodeMarkup(node: XmlNode): string {
  if (typeof node === "string") return escapeText(node);
  return `<${node.local}>${innerMarkup(node)}</${node.local}>`;
}

const EMAIL = String.raw`[^\s()<>@]+@[^\s()<>]+`;
const EMAIL_THEN_NAME = new RegExp(String.raw`^${EMAIL}\s*\((.+)\)$`);
const NAME_THEN_EMAIL = new RegExp(String.raw`^(.+?)\s*[(<]\s*${EMAIL}\s*[)>]$`);

/**
 * The name in RSS's "email (Name)" convention and its variants ("Name (email)", "Name <email>");
 * a bare address stays as it is, since it is all the feed says about the author.
 */
export function personName(author: string | undefined): string | undefined {
  if (!author) return undefined;
  return (
    author.match(EMAIL_THEN_NAME)?.[1]?.trim() ||
    author.match(NAME_THEN_EMAIL)?.[1]?.trim() ||
    author
  );
}
