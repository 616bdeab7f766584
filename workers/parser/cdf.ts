import { toIsoDate } from "./dates";
import { finishEntry } from "./entry";
import { plainText, titleText } from "./text";
import type { ParsedEntry, ParsedFeed } from "./types";
import { resolveUrl } from "./urls";
import { textOf, type XmlElement } from "./xmlTree";

// Netscape / Microsoft's Channel Definition Format (CDF, 1997), which some sites still serve:
// a <CHANNEL HREF=… BASE=… LASTMOD=…> of <ITEM HREF=… LASTMOD=…> elements, each with <TITLE> and
// <ABSTRACT>; channels nest (a sub-channel's items are the feed's too, in document order).
// Names are written in capitals by convention and matched in any case here. An item has no id
// of its own, so its identity is its canonical link (entry.ts).

const is = (el: XmlElement, name: string) => el.ns === "" && el.local.toUpperCase() === name;

/** Whether the root element is a CDF channel: <CHANNEL> with an HREF or an <ITEM>. */
export function isCdfRoot(root: XmlElement): boolean {
  if (!is(root, "CHANNEL")) return false;
  return (
    attr(root, "HREF") !== undefined ||
    root.children.some((c) => typeof c !== "string" && is(c, "ITEM"))
  );
}

/** An attribute in any case (`HREF`, `href`). */
function attr(el: XmlElement, name: string): string | undefined {
  const upper = name.toUpperCase();
  for (const key in el.attrs) if (key.toUpperCase() === upper) return el.attrs[key];
  return undefined;
}

function childText(el: XmlElement, name: string): string {
  for (const c of el.children) if (typeof c !== "string" && is(c, name)) return textOf(c);
  return "";
}

/** The base for a channel's relative HREFs: its BASE attribute over the inherited one. */
function baseOf(channel: XmlElement, inherited: string | undefined): string | undefined {
  const base = attr(channel, "BASE")?.trim();
  return (base && resolveUrl(base, inherited)) || inherited;
}

function href(el: XmlElement, base: string | undefined): string | undefined {
  const raw = attr(el, "HREF")?.trim();
  if (!raw) return undefined;
  return resolveUrl(raw, base) ?? raw;
}

function readItem(item: XmlElement, base: string | undefined): ParsedEntry {
  return finishEntry({
    title: titleText(childText(item, "TITLE")),
    link: href(item, base),
    updated: toIsoDate(attr(item, "LASTMOD")),
    summary: plainText(childText(item, "ABSTRACT")) || undefined,
    categories: [],
  });
}

function collectItems(channel: XmlElement, base: string | undefined, into: ParsedEntry[]): void {
  for (const c of channel.children) {
    if (typeof c === "string") continue;
    if (is(c, "ITEM")) into.push(readItem(c, base));
    else if (is(c, "CHANNEL")) collectItems(c, baseOf(c, base), into);
  }
}

export function readCdf(root: XmlElement): Omit<ParsedFeed, "format"> {
  const base = baseOf(root, root.base);
  const entries: ParsedEntry[] = [];
  collectItems(root, base, entries);
  const feed: ParsedFeed["feed"] = { title: titleText(childText(root, "TITLE")) };
  const link = href(root, root.base);
  if (link) feed.link = link;
  const updated = toIsoDate(attr(root, "LASTMOD"));
  if (updated) feed.updated = updated;
  return { feed, entries };
}
