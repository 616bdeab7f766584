// Fills the e2e server's embedded database through the real writer before `next start` opens
// it (PGlite allows one process per data directory, so this closes it again when done).
import { config } from "@/lib/config";
import { openDatabase } from "@/lib/db";
import { edit, observe, retract } from "@/workers/store";
import { seedDedup } from "./fixtures/dedup";
import { E2E_SOURCE, REPAIR_ROW, REPAIR_SOURCE, WRITES } from "./fixtures/news";
import { seedStories } from "./fixtures/stories";

const { DATABASE_URL, WIREWATCH_DATA_DIR } = config();
if (DATABASE_URL) {
  throw new Error("e2e/prepare.ts fills the embedded database: unset DATABASE_URL");
}

const db = await openDatabase({ dataDir: WIREWATCH_DATA_DIR });
try {
  await db.prisma.source.createMany({ data: [{ ...E2E_SOURCE }, { ...REPAIR_SOURCE }] });
  const ops = { observe, edit, retract };
  for (const [i, write] of WRITES.entries()) {
    const outcome = await ops[write.op](db, write.input);
    if (outcome.result !== write.result) {
      throw new Error(
        `write ${i} (${write.op}) answered ${outcome.result}, expected ${write.result}` +
          (outcome.reason ? `: ${outcome.reason}` : ""),
      );
    }
  }
  // The e2e server also ingests the newsroom simulator, whose backlog alone is more than the
  // home page's 50 latest rows. Dating the fixture rows' last update a day ahead keeps them
  // the newest, in their order, for as long as a run lasts.
  await db.prisma.$executeRaw`
    UPDATE news SET updated_at = updated_at + interval '1 day' WHERE source_id = ${E2E_SOURCE.id}`;

  const repair = await observe(db, REPAIR_ROW.input);
  if (repair.result !== "inserted") throw new Error(`repair row: ${repair.result}`);
  await db.prisma.$executeRaw`
    UPDATE news SET category = NULL WHERE entry_key = ${repair.entryKey}`;
  // The story-api copy as its consumer leaves it, for the Stories page (e2e/stories.spec.ts).
  await seedStories(db);
  // Clusters, links and a review queue made by the real dedup stage (e2e/dedup.spec.ts).
  await seedDedup(db);
  console.log(`e2e prepare: ${WRITES.length + 1} writes into ${db.location}`);
} finally {
  await db.close();
}
