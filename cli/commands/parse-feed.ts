import { readFile } from "node:fs/promises";
import { parseFeed } from "@/workers/parser/parseFeed";
import { UsageError } from "../usage";

export const usage = `parse-feed FILE...              parse each feed file (read as bytes) and print one JSON line per
                                  file: {"file","ok","error"?,"feed":{"title","link","id"?,"updated"?},
                                  "entries":[{"id","title","link","published"?,"updated"?,"summary"?,
                                  "author"?}]}; dates ISO 8601 UTC, a missing link is null; a file that
                                  cannot be read or parsed gives ok:false, error, feed {} and entries
                                  [] and the next file follows; exit 0 if every file parsed, else 1`;

interface Line {
  file: string;
  ok: boolean;
  error?: string;
  feed: Record<string, string | null>;
  entries: Record<string, string | null>[];
}

async function parseOne(file: string): Promise<Line> {
  try {
    const parsed = parseFeed(await readFile(file));
    const { title, link, id, updated } = parsed.feed;
    return {
      file,
      ok: true,
      feed: { title, link: link ?? null, id, updated } as Record<string, string | null>,
      entries: parsed.entries.map((e) => ({
        id: e.id,
        title: e.title,
        link: e.link ?? null,
        published: e.published,
        updated: e.updated,
        summary: e.summary,
        author: e.author,
      })) as Record<string, string | null>[],
    };
  } catch (err) {
    return { file, ok: false, error: (err as Error).message, feed: {}, entries: [] };
  }
}

export async function run(args: string[]): Promise<number> {
  if (args.length === 0) throw new UsageError("parse-feed needs at least one FILE");
  let failed = 0;
  for (const file of args) {
    const line = await parseOne(file);
    if (!line.ok) failed++;
    // JSON.stringify drops the undefined optional fields, so absent means absent.
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
  return failed === 0 ? 0 : 1;
}
