import { decodeHTML } from "entities";
import type { XmlElement, XmlNode } from "./xmlTree";

// Feeds put markup and entities in text fields at every level of escaping: raw XHTML, escaped
// HTML, CDATA holding escaped HTML, and entities escaped twice (`&amp;eacute;`). The XML parser
// has already undone one level; plainText undoes up to three more, stripping tags after each,
// and stops as soon as a pass changes nothing. The cost is that a title that really means the
// literal text "<b>" loses it; wirewatch shows titles as text, never as markup, so that is the
// right side to err on.

const MAX_PASSES = 3;
const BLOCK = new Set(
  "p div br hr li ul ol h1 h2 h3 h4 h5 h6 tr td th table blockquote pre section article header footer figure figcaption dd dt dl img".split(
    " ",
  ),
);
const DROPPED = /<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>|<!--[\s\S]*?-->/gi;
// biome-ignore lint/suspicious/noControlCharactersInRegex: XML forbids these C0 controls in text; some feeds carry them anyway
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

const isNameStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isNameChar = (c: number) => isNameStart(c) || (c >= 48 && c <= 58) || c === 45;

/**
 * Where the tag starting at `lt` ends (index past its ">"), or -1 when no tag starts there; the
 * same tags as `/<\/?([A-Za-z][A-Za-z0-9:-]*)(?:\s[^<>]*)?\/?>/`, without a callback per match.
 */
function tagAt(s: string, lt: number): { end: number; name: string } | undefined {
  let i = lt + 1;
  if (s.charCodeAt(i) === 47) i++;
  const start = i;
  if (!isNameStart(s.charCodeAt(i))) return undefined;
  while (isNameChar(s.charCodeAt(i))) i++;
  const name = s.slice(start, i);
  const c = s.charCodeAt(i);
  if (c === 62) return { end: i + 1, name };
  if (c === 47) return s.charCodeAt(i + 1) === 62 ? { end: i + 2, name } : undefined;
  if (i < s.length && isSpace(c)) {
    for (let j = i + 1; j < s.length; j++) {
      const d = s.charCodeAt(j);
      if (d === 62) return { end: j + 1, name };
      if (d === 60) return undefined;
    }
  }
  return undefined;
}

function stripTags(raw: string): string {
  if (!raw.includes("<")) return raw;
  const s = raw.replace(DROPPED, " ");
  let out = "";
  let last = 0;
  for (let lt = s.indexOf("<"); lt !== -1; lt = s.indexOf("<", lt + 1)) {
    const tag = tagAt(s, lt);
    if (!tag) continue;
    out += s.slice(last, lt);
    if (BLOCK.has(tag.name.toLowerCase())) out += " ";
    last = tag.end;
    lt = tag.end - 1;
  }
  return last === 0 ? s : out + s.slice(last);
}

/** What /\s/ and trim() call whitespace (Unicode White_Space without U+0085, plus U+FEFF). */
function isSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * `s.replace(CONTROLS, "").replace(/\s+/g, " ").trim()` in one pass that copies nothing when
 * there is no control character and every run of whitespace is already one inner space (most
 * titles); those two regexes were 13 % of reading a big feed.
 */
function squash(s: string): string {
  let out = "";
  let last = 0;
  for (let i = 0; i < s.length; ) {
    const c = s.charCodeAt(i);
    if (c > 32 && c < 127) {
      i++;
      continue;
    }
    if ((c < 32 && c !== 9 && c !== 10 && c !== 13) || c === 127) {
      return squash(s.replace(CONTROLS, ""));
    }
    if (!isSpace(c)) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < s.length && isSpace(s.charCodeAt(j))) j++;
    const edge = i === 0 || j === s.length;
    if (edge || j > i + 1 || c !== 32) {
      out += s.slice(last, i) + (edge ? "" : " ");
      last = j;
    }
    i = j;
  }
  return last === 0 ? s : out + s.slice(last);
}

/** Text with tags removed, entities decoded (HTML names, numeric, double-escaped) and whitespace collapsed. */
export function plainText(raw: string): string {
  let text = raw;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const stripped = stripTags(text);
    const next = stripped.includes("&") ? decodeHTML(stripped) : stripped;
    if (next === text) break;
    text = next;
  }
  return squash(stripTags(text));
}

// HTML elements a title written as HTML may use: feedparser's list of acceptable elements
// (its `lookslikehtml`), whose rule we follow. Text whose tags are all of these, and that has an
// entity reference or a start and an end tag, is HTML; anything else is the literal text it
// says, so a title about `<blink>` (written `&lt;blink&gt;`) keeps the word, tags and all.
const HTML_ELEMENTS = new Set(
  `a abbr acronym address area article aside audio b bdi bdo big blockquote br button
  canvas caption center cite code col colgroup command datagrid datalist dd del details dfn dialog
  dir div dl dt em event-source fieldset figcaption figure font footer form h1 h2 h3 h4 h5 h6
  header hr i img input ins keygen kbd label legend li m map menu meter multicol nav nextid noscript
  ol optgroup option output p pre progress q s samp section select small sound source spacer span
  strike strong sub sup table tbody td textarea tfoot th thead time tr tt u ul var video`.split(
    /\s+/,
  ),
);
const START_TAG = /<\w/;
const END_TAG = /<\/\w+>/;
const ENTITY_REF = /&#?\w+;/;
const TAG_NAME = /<\/?(\w+)/g;
const NAMED_REF = /&(\w+);/g;

/**
 * feedparser's `lookslikehtml`: an end tag or a reference, only known elements and entities.
 * Stricter in one way: an end tag counts only beside a start tag, so a title about `</div>`
 * alone is text.
 */
function looksLikeHtml(s: string): boolean {
  if (!ENTITY_REF.test(s) && !(END_TAG.test(s) && START_TAG.test(s))) return false;
  for (const [, name] of s.matchAll(TAG_NAME)) {
    if (!HTML_ELEMENTS.has((name as string).toLowerCase())) return false;
  }
  for (const [ref] of s.matchAll(NAMED_REF)) {
    if (decodeHTML(ref) === ref) return false;
  }
  return true;
}

/**
 * A title as plain text. Unlike plainText (summaries), a level of markup is undone only while
 * the text still looks like HTML, so escaped markup that is not HTML stays as the literal text it
 * is: `&lt;blink&gt;` is a title about blink tags, `&lt;/example&gt;` a title about an end tag.
 */
export function titleText(raw: string): string {
  if (!raw.includes("<") && !raw.includes("&")) return squash(raw);
  let text = raw;
  for (let pass = 0; pass < MAX_PASSES && looksLikeHtml(text); pass++) {
    const stripped = stripTags(text);
    const next = stripped.includes("&") ? decodeHTML(stripped) : stripped;
    if (next === text) break;
    text = next;
  }
  return squash(text.includes("<") && looksLikeHtml(text) ? stripTags(text) : text);
}

/** One level of markup undone: tags stripped, entities decoded once (XHTML to its text). */
export function markupToText(markup: string): string {
  const stripped = stripTags(markup);
  return stripped.includes("&") ? decodeHTML(stripped) : stripped;
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
