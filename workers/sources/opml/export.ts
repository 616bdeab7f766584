import type { Database } from "@/lib/db";
import { folderNames } from "./folder";

/**
 * Sources as OPML 2.0 (http://opml.org/spec2.opml), the way the readers write it: a folder is an
 * outline with text, a feed an outline with type="rss" (Atom too, as every reader does), text
 * and title, xmlUrl and htmlUrl when known. parseOpml reads back what this writes.
 */

export interface OpmlExportEntry {
  title: string;
  xmlUrl: string;
  htmlUrl?: string;
  /** Folder names, outermost first; [] at the top of the body. */
  folder?: string[];
}

export interface BuildOptions {
  title?: string;
  dateCreated?: Date;
}

interface Folder {
  feeds: OpmlExportEntry[];
  folders: Map<string, Folder>;
}

const oneLine = (s: string) => s.replace(/\s+/g, " ").trim();

/**
 * Text fit for an attribute or an element: the five XML entities escaped, and the characters
 * XML 1.0 cannot hold at all (C0 controls but tab, line feed and return; lone surrogates;
 * U+FFFE/FFFF) dropped, so one bad source name cannot make the whole export unreadable. Both
 * tests come first: most names need neither change.
 */
const NOT_XML =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters XML 1.0 forbids, matched to drop them
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const SPECIAL = /[&<>"']/;
function xmlText(s: string): string {
  let text = NOT_XML.test(s) ? s.replace(new RegExp(NOT_XML, "g"), "") : s;
  if (SPECIAL.test(text)) {
    text = text
      .replaceAll("&", "&amp;")
      .replaceAll("<", "&lt;")
      .replaceAll(">", "&gt;")
      .replaceAll('"', "&quot;")
      .replaceAll("'", "&apos;");
  }
  return text;
}

function writeFeed(out: string[], e: OpmlExportEntry, indent: string): void {
  const name = xmlText(oneLine(e.title));
  const html = e.htmlUrl ? ` htmlUrl="${xmlText(e.htmlUrl)}"` : "";
  out.push(
    `${indent}<outline type="rss" text="${name}" title="${name}" xmlUrl="${xmlText(e.xmlUrl)}"${html}/>`,
  );
}

function writeFolder(out: string[], folder: Folder, indent: string): void {
  // Feeds first in the order given, then folders by name (as Miniflux sorts its categories).
  for (const feed of folder.feeds) writeFeed(out, feed, indent);
  const names = [...folder.folders.keys()].sort((a, b) => a.localeCompare(b));
  for (const name of names) {
    const inner = folder.folders.get(name) as Folder;
    const label = xmlText(name);
    out.push(`${indent}<outline text="${label}" title="${label}">`);
    writeFolder(out, inner, `${indent}  `);
    out.push(`${indent}</outline>`);
  }
}

/**
 * The OPML 2.0 text of these feeds, grouped by folder. Written line by line rather than through
 * an XML builder: for 100,000 sources fast-xml-parser's builder took 0.8–1.8 s, this about a
 * tenth of that (the Sources page's export at the fleet size docs/capacity.md measures).
 */
export function buildOpml(entries: OpmlExportEntry[], options: BuildOptions = {}): string {
  const root: Folder = { feeds: [], folders: new Map() };
  for (const e of entries) {
    let at = root;
    for (const raw of e.folder ?? []) {
      const name = oneLine(raw);
      if (!name) continue;
      let next = at.folders.get(name);
      if (!next) {
        next = { feeds: [], folders: new Map() };
        at.folders.set(name, next);
      }
      at = next;
    }
    at.feeds.push(e);
  }
  const dateCreated = (options.dateCreated ?? new Date()).toUTCString();
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<opml version="2.0">',
    "  <head>",
    `    <title>${xmlText(oneLine(options.title ?? "wirewatch sources"))}</title>`,
    `    <dateCreated>${dateCreated}</dateCreated>`,
    "    <docs>http://opml.org/spec2.opml</docs>",
    "  </head>",
  ];
  if (root.feeds.length === 0 && root.folders.size === 0) {
    out.push("  <body/>");
  } else {
    out.push("  <body>");
    writeFolder(out, root, "    ");
    out.push("  </body>");
  }
  out.push("</opml>", "");
  return out.join("\n");
}

/**
 * Every feed source (file and dashboard, enabled or not) as OPML, by name, each in its folder
 * (sources.folder "News/Tech" → an outline "News" holding "Tech"); sources without one at the top
 * of the body. parseOpml and planImport read the same folders back.
 */
export async function exportSources(
  db: Database,
  options: BuildOptions = {},
): Promise<{ opml: string; count: number }> {
  // Every feed source: three columns as they are, without Prisma's model mapping per row.
  const sources = await db.prisma.$queryRaw<
    { name: string; url: string; folder: string | null }[]
  >`SELECT name, url, folder FROM sources WHERE kind = 'feed' AND url IS NOT NULL
    ORDER BY name, id`;
  const entries = sources.map((s) => ({
    title: s.name,
    xmlUrl: s.url,
    folder: folderNames(s.folder),
  }));
  return { opml: buildOpml(entries, options), count: entries.length };
}
