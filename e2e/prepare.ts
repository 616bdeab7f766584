// Fills the e2e server's embedded database through the real writer before `next start` opens
// it (PGlite allows one process per data directory, so this closes it again when done).
import { config } from "@/lib/config";
import { openDatabase } from "@/lib/db";
import { edit, observe, retract } from "@/workers/store";
import { E2E_SOURCE, WRITES } from "./fixtures/news";

const { DATABASE_URL, WIREWATCH_DATA_DIR } = config();
if (DATABASE_URL) {
  throw new Error("e2e/prepare.ts fills the embedded database: unset DATABASE_URL");
}

const db = await openDatabase({ dataDir: WIREWATCH_DATA_DIR });
try {
  await db.prisma.source.create({ data: { ...E2E_SOURCE } });
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
  console.log(`e2e prepare: ${WRITES.length} writes into ${db.location}`);
} finally {
  await db.close();
}
