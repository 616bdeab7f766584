/**
 * A process that claims a "became strong" notification and then hangs before sending it, for
 * the test that kills it there (kill -9 between claim and send):
 *
 *   node --import tsx workers/stories/testing/claimAndHang.ts <database url> <source id> <story id>
 *
 * Prints `claimed` once the claim is committed, then waits for ever inside the send.
 */
import { openDatabase } from "@/lib/db";
import { notifyOnce } from "../notify";

const [url, sourceId, storyId] = process.argv.slice(2);
if (!url || !sourceId || !storyId) {
  console.error("usage: claimAndHang.ts <database url> <source id> <story id>");
  process.exit(2);
}
const db = await openDatabase({ url, poolSize: 1 });
await notifyOnce(
  db,
  { sourceId, story: { id: storyId, ticker: "ACME", title: "Acme turns strong", version: 2 } },
  () => {
    console.log("claimed");
    return new Promise<void>(() => {}); // killed here
  },
);
