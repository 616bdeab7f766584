import { readFile } from "node:fs/promises";
import { userInfo } from "node:os";
import { parseArgs } from "node:util";
import { openConfiguredDatabase } from "@/lib/db";
import { decodeBody } from "@/workers/parser/decode";
import {
  applyImport,
  existingSources,
  type ImportPlan,
  type OpmlProblem,
  type PlannedSource,
  parseOpml,
  planImport,
} from "@/workers/sources/opml";
import { UsageError } from "../../usage";

export const usage = `sources import-opml FILE        add the feeds of an OPML file (Feedly, Inoreader, Miniflux,
        [--dry-run] [--strict]    NewsBlur, FreshRSS …; FILE - reads stdin) as dashboard sources:
        [--allow-private]         kind feed, polled every 300 s, enabled; sources from the sources
        [--actor NAME] [--json]   file are never changed. Every outline not added is reported with
                                  its line: duplicate (in the file, or already a source), invalid or
                                  non-http(s) URL, a URL blocked as SSRF (--allow-private lets
                                  loopback and private addresses in), an outline that is no feed,
                                  malformed XML, folders nested past 200 characters. --dry-run
                                  prints what would be added and skipped and changes nothing. Each
                                  feed is filed in the folder it sits in ("News/Tech"); OPML 2.0
                                  categories are reported, not stored. Audited as --actor (default
                                  the OS user). Exit 0: no errors (duplicates are notices); 1: the
                                  file had errors, the good lines still imported unless --strict,
                                  which then imports nothing; 2: bad usage`;

// A 10,000-feed export (the most one import adds) is about 3 MB; a file far past that is a
// mistake, and is refused before it is read into memory twice.
const MAX_FILE_BYTES = 32 * 1024 * 1024;

export interface ImportReport {
  file: string;
  dryRun: boolean;
  strict: boolean;
  /** False when the file could not be read at all (malformed XML, entities, not OPML). */
  readable: boolean;
  /** True when sources were written (not a dry run, not refused by --strict, something to add). */
  applied: boolean;
  opml: ImportPlan["opml"];
  /** Added, or in a dry run would be added. */
  added: Omit<PlannedSource, "config">[];
  /** Every outline not added and every problem of the file, by line. */
  skipped: OpmlProblem[];
  counts: { added: number; skipped: number; errors: number; notices: number };
  auditId: string | null;
}

async function readInput(file: string): Promise<Buffer> {
  if (file === "-") {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of process.stdin) {
      size += (chunk as Buffer).length;
      if (size > MAX_FILE_BYTES) throw new Error(`stdin is over ${MAX_FILE_BYTES} bytes`);
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks);
  }
  const bytes = await readFile(file);
  if (bytes.length > MAX_FILE_BYTES) {
    throw new Error(`${file} is ${bytes.length} bytes, over ${MAX_FILE_BYTES}`);
  }
  return bytes;
}

const where = (s: { folder: string[]; categories: string[] }) =>
  [
    s.folder.length ? ` in ${s.folder.join(" / ")}` : "",
    s.categories.length ? ` (categories ${s.categories.join(", ")})` : "",
  ].join("");

function printHuman(report: ImportReport): void {
  const lines: [number, string][] = [
    ...report.added.map((s): [number, string] => [
      s.line,
      `line ${s.line}: ${report.applied ? "added" : "add"} ${s.id} "${s.name}" ${s.url}${where(s)}`,
    ]),
    ...report.skipped.map((p): [number, string] => [
      p.line,
      `line ${p.line}: ${p.severity === "error" ? "error" : "skip"} ${p.code}: ${p.message}`,
    ]),
  ];
  // Stable sort: on one line (NewsBlur writes everything on one), the file's order is kept.
  for (const [, text] of lines.sort((a, b) => a[0] - b[0])) console.log(text);

  if (report.added.some((s) => s.categories.length > 0)) {
    console.log("(categories are reported only: a source keeps its folder, not its categories)");
  }
  const { added, skipped, errors, notices } = report.counts;
  const tally = `skipped ${skipped} (${errors} error${errors === 1 ? "" : "s"}, ${notices} notice${notices === 1 ? "" : "s"})`;
  if (!report.readable) {
    console.log(`${report.file} could not be read as OPML; nothing was imported`);
  } else if (report.dryRun) {
    const refused = report.strict && errors > 0 ? "; --strict, so nothing would be imported" : "";
    console.log(
      `dry run of ${report.file}: would add ${added}, ${tally}${refused}; nothing changed`,
    );
  } else if (report.strict && errors > 0) {
    console.log(`${report.file}: ${tally}; --strict, so nothing was imported`);
  } else {
    console.log(
      `imported ${report.file}: added ${added} dashboard source${added === 1 ? "" : "s"}, ${tally}` +
        (report.auditId ? `; audit row ${report.auditId}` : "") +
        (added > 0 ? "; polled from the next frontier sync (within 30 s of a running app)" : ""),
    );
  }
}

export async function run(args: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (err) {
    throw new UsageError(`sources import-opml: ${(err as Error).message}`);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) {
    throw new UsageError("sources import-opml needs exactly one FILE (- for stdin)");
  }
  const file = positionals[0] as string;
  const dryRun = values["dry-run"];
  const strict = values.strict;

  let bytes: Buffer;
  try {
    bytes = await readInput(file);
  } catch (err) {
    console.error(`sources import-opml: cannot read ${file}: ${(err as Error).message}`);
    return 1;
  }
  const doc = parseOpml(decodeBody(bytes).text);

  const report = (
    plan: ImportPlan,
    added: PlannedSource[],
    extra: OpmlProblem[],
    auditId: string | null,
    applied: boolean,
  ): ImportReport => {
    const skipped = [...plan.problems, ...extra].sort((a, b) => a.line - b.line);
    const errors = skipped.filter((p) => p.severity === "error").length;
    return {
      file,
      dryRun,
      strict,
      readable: plan.readable,
      applied,
      opml: plan.opml,
      added: added.map(({ config: _config, ...s }) => s),
      skipped,
      counts: {
        added: added.length,
        skipped: skipped.length,
        errors,
        notices: skipped.length - errors,
      },
      auditId,
    };
  };
  const finish = (r: ImportReport) => {
    if (values.json) console.log(JSON.stringify(r));
    else printHuman(r);
    return r.counts.errors > 0 ? 1 : 0;
  };

  // A file that cannot be read needs no database: its report is the reason, by line.
  if (!doc.readable) return finish(report(planImport(doc, []), [], [], null, false));

  // A dry run only reads: on a directory with no database it says so rather than creating one.
  const db = await openConfiguredDatabase({ mustExist: dryRun });
  try {
    const plan = planImport(doc, await existingSources(db), {
      allowPrivate: values["allow-private"],
    });
    if (strict && plan.errors > 0) return finish(report(plan, [], [], null, false));
    if (dryRun) return finish(report(plan, plan.add, [], null, false));
    const result = await applyImport(db, plan, { actor: values.actor, file });
    return finish(
      report(plan, result.added, result.addedMeanwhile, result.auditId, result.added.length > 0),
    );
  } finally {
    await db.close();
  }
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: {
      "dry-run": { type: "boolean", default: false },
      strict: { type: "boolean", default: false },
      "allow-private": { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      actor: { type: "string", default: `cli:${userInfo().username}` },
    },
  });
}
