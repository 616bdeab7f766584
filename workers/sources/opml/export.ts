import { XMLBuilder } from "fast-xml-parser";
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

type OutNode = Record<string, unknown>;

// fast-xml-parser's builder escapes &, <, >, " and ' in attributes and text; it leaves a line
// break in an attribute as it is, which a reader turns into a space, so labels are one line.
const builder = new XMLBuilder({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  format: true,
  indentBy: "  ",
  suppressEmptyNode: true,
  processEntities: true,
});

const oneLine = (s: string) => s.replace(/\s+/g, " ").trim();

function feedNode(e: OpmlExportEntry): OutNode {
  const name = oneLine(e.title);
  const attrs: Record<string, string> = {
    "@type": "rss",
    "@text": name,
    "@title": name,
    "@xmlUrl": e.xmlUrl,
  };
  if (e.htmlUrl) attrs["@htmlUrl"] = e.htmlUrl;
  return { outline: [], ":@": attrs };
}

function folderNodes(folder: Folder): OutNode[] {
  // Feeds first in the order given, then folders by name (as Miniflux sorts its categories).
  const nodes = folder.feeds.map(feedNode);
  const names = [...folder.folders.keys()].sort((a, b) => a.localeCompare(b));
  for (const name of names) {
    const inner = folder.folders.get(name) as Folder;
    nodes.push({ outline: folderNodes(inner), ":@": { "@text": name, "@title": name } });
  }
  return nodes;
}

/** The OPML 2.0 text of these feeds, grouped by folder. */
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
  const doc: OutNode[] = [
    { "?xml": [{ "#text": "" }], ":@": { "@version": "1.0", "@encoding": "UTF-8" } },
    {
      opml: [
        {
          head: [
            { title: [{ "#text": oneLine(options.title ?? "wirewatch sources") }] },
            { dateCreated: [{ "#text": dateCreated }] },
            { docs: [{ "#text": "http://opml.org/spec2.opml" }] },
          ],
        },
        { body: folderNodes(root) },
      ],
      ":@": { "@version": "2.0" },
    },
  ];
  return `${builder.build(doc).trim()}\n`;
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
  const sources = await db.prisma.source.findMany({
    where: { kind: "feed", url: { not: null } },
    select: { name: true, url: true, folder: true },
    orderBy: [{ name: "asc" }, { id: "asc" }],
  });
  const entries = sources.map((s) => ({
    title: s.name,
    xmlUrl: s.url as string,
    folder: folderNames(s.folder),
  }));
  return { opml: buildOpml(entries, options), count: entries.length };
}
