import { rename, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { openConfiguredDatabase } from "@/lib/db";
import { exportSources } from "@/workers/sources/opml";
import { UsageError } from "../../usage";

export const usage = `sources export-opml             every feed source (file and dashboard, enabled or not) as
        [--out FILE] [--title T]  OPML 2.0, each in its folder as nested outlines, to stdout
                                  unless --out; import-opml reads it back, folders included`;

export async function run(args: string[]): Promise<number> {
  let values: { out?: string; title?: string };
  try {
    ({ values } = parseArgs({
      args,
      options: { out: { type: "string" }, title: { type: "string" } },
    }));
  } catch (err) {
    throw new UsageError(`sources export-opml: ${(err as Error).message}`);
  }
  if (values.out === "") throw new UsageError("sources export-opml: --out needs a file name");

  // Export only reads: it must not create an embedded database where there was none.
  const db = await openConfiguredDatabase({ mustExist: true });
  try {
    const { opml, count } = await exportSources(db, { title: values.title });
    if (values.out === undefined) {
      process.stdout.write(opml);
      return 0;
    }
    // Written beside and renamed, so an interrupted export never leaves half a file in place.
    const partial = `${values.out}.partial`;
    await writeFile(partial, opml, "utf8");
    await rename(partial, values.out);
    console.log(`wrote ${count} feed source${count === 1 ? "" : "s"} to ${values.out}`);
    return 0;
  } finally {
    await db.close();
  }
}
